"""What the nodes agree on through Redis: who is alive, who owns which room, and where every room is.

- `Registry`: each node's key (its URL, rooms and connections) with a TTL its heartbeat renews; a node whose key
  expired is dead. New rooms go to the live node with the fewest rooms (`place`).
- `Leases`: one key per room naming its owner (SET NX PX); renewing and releasing are Lua compare-and-sets on the
  node id, so no node can extend or drop another's lease. A lease only says who may claim; the store's owner
  epoch (`Store.claim_room`, fenced writes) is what makes two owners unable to both record a move.
- `Addresses`: the connections each client address has open over the whole cluster (a hash per address, one
  field per running node), so that the per-address connection cap holds across nodes.
- `Directory`: a hash code -> {owner, summary} every node mirrors in memory (a full read at start and after every
  reconnect, then the deltas published on its channel). Entries are written only by the node holding the room's
  lease (Lua), so a node that lost a room cannot overwrite its new owner's entry.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from gamenight.server.cluster.trust import Records
from gamenight.server.cluster.wire import pack, unpack

NODE_TTL_MS = 3000
LEASE_MS = 3000
BEAT_S = 1.0


@dataclass(frozen=True, slots=True)
class Keys:
    """Every Redis key and channel of one cluster (a prefix lets several share one Redis)."""

    prefix: str = "gn:"

    def node(self, node: str) -> str:
        return f"{self.prefix}node:{node}"

    @property
    def nodes(self) -> str:
        return f"{self.prefix}nodes"

    def lease(self, code: str) -> str:
        return f"{self.prefix}lease:{code}"

    @property
    def directory(self) -> str:
        return f"{self.prefix}dir"

    def inbox(self, node: str) -> str:
        """The channel a node reads what is forwarded to it."""
        return f"{self.prefix}to:{node}"

    @property
    def everyone(self) -> str:
        """The channel every node reads (sessions resumed, resync requests)."""
        return f"{self.prefix}all"

    def token(self, token_hash: str) -> str:
        return f"{self.prefix}token:{token_hash}"

    @property
    def boot(self) -> str:
        """A random marker the first node sets: a new one means Redis restarted empty."""
        return f"{self.prefix}boot"

    @property
    def claims(self) -> str:
        """The hash name key -> the first claim of that name (arbiter of two claims on two nodes at once)."""
        return f"{self.prefix}claims"

    @property
    def online(self) -> str:
        """The hash session -> who and where, of every session connected to a node."""
        return f"{self.prefix}online"

    def where(self, session: str) -> str:
        return f"{self.prefix}where:{session}"

    def address(self, ip: str) -> str:
        """The hash node run -> connections open from the client address `ip`."""
        return f"{self.prefix}ip:{ip}"


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """What a node's key says about it."""

    node: str
    url: str
    rooms: int
    connections: int
    run: str = ""  # random per process: counts kept under an earlier run of the same node id are not its own


class Registry:
    """The live nodes: this node's heartbeat, and everyone's keys."""

    def __init__(self, redis: Redis, keys: Keys, node: str, url: str, ttl_ms: int = NODE_TTL_MS) -> None:
        self.redis, self.keys, self.node, self.url, self.ttl_ms = redis, keys, node, url, ttl_ms
        self.run = f"{node}/{secrets.token_hex(4)}"
        self.live: dict[str, NodeInfo] = {}  # as of the last `refresh`

    async def beat(self, rooms: int, connections: int) -> None:
        """Say this node is alive (its key lives `ttl_ms` more)."""
        value = json.dumps(
            {"url": self.url, "rooms": rooms, "connections": connections, "run": self.run, "at": time.time()}
        )
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self.keys.node(self.node), value, px=self.ttl_ms)
            pipe.sadd(self.keys.nodes, self.node)
            await pipe.execute()

    async def refresh(self) -> tuple[dict[str, NodeInfo], set[str]]:
        """Read every node's key: (the live nodes, the known nodes whose key expired)."""
        known = sorted(
            m.decode() if isinstance(m, bytes) else str(m) for m in await self.redis.smembers(self.keys.nodes)
        )
        values = await self.redis.mget([self.keys.node(n) for n in known]) if known else []
        live, dead = {}, set()
        for node, value in zip(known, values, strict=True):
            if value is None:
                dead.add(node)
                continue
            info = json.loads(value)
            live[node] = NodeInfo(
                node,
                str(info.get("url", "")),
                int(info.get("rooms", 0)),
                int(info.get("connections", 0)),
                str(info.get("run", "")),
            )
        self.live = live
        return live, dead

    async def forget(self, node: str) -> None:
        """Drop a dead node from the known set (once its rooms have been taken over)."""
        await self.redis.srem(self.keys.nodes, node)

    async def leave(self) -> None:
        """This node stops cleanly: its key goes now, not at its TTL."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(self.keys.node(self.node))
            pipe.srem(self.keys.nodes, self.node)
            await pipe.execute()


def place(live: dict[str, NodeInfo], me: str, my_rooms: int) -> str:
    """Where a new room goes: the live node with the fewest rooms; a tie (or nobody else known) keeps it here."""
    counts = {node: info.rooms for node, info in live.items()}
    counts[me] = my_rooms
    return min(counts, key=lambda node: (counts[node], node != me, node))


_ADMIT = """
local total = 0
for i = 3, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v then total = total + tonumber(v) end
end
if total >= tonumber(ARGV[1]) then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
redis.call('PEXPIRE', KEYS[1], 86400000)
return 1
"""
_DEPART = """
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
"""


class Addresses:
    """Connections per client address over the cluster: the hash `ip:<address>` holds one count per node run.

    A node admits a connection only if the counts of the live runs (its own included) are under the cap, in one
    Lua call (so two nodes cannot both admit the last place); the counts of dead runs are ignored, and each
    address's hash expires a day after its last admission.
    """

    def __init__(self, redis: Redis, keys: Keys, run: str) -> None:
        self.redis, self.keys, self.run = redis, keys, run
        self._admit = redis.register_script(_ADMIT)
        self._depart = redis.register_script(_DEPART)

    async def admit(self, ip: str, cap: int, runs: list[str]) -> bool:
        """Count one more connection from `ip` here, unless the live runs have `cap` from it already."""
        others = [run for run in runs if run and run != self.run]
        return bool(await self._admit(keys=[self.keys.address(ip)], args=[cap, self.run, self.run, *others]))

    async def depart(self, ip: str) -> None:
        """One connection from `ip` here closed."""
        await self._depart(keys=[self.keys.address(ip)], args=[self.run])

    async def restore(self, counts: dict[str, int]) -> None:
        """After Redis restarted empty: this run's counts again."""
        if counts:
            async with self.redis.pipeline(transaction=False) as pipe:
                for ip, count in counts.items():
                    pipe.hset(self.keys.address(ip), self.run, count)
                    pipe.pexpire(self.keys.address(ip), 86400000)
                await pipe.execute()


_ACQUIRE = """
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if v then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
_RENEW = """
local lost = {}
for i, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v == ARGV[1] then redis.call('PEXPIRE', key, ARGV[2])
  elseif not v then redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
  else lost[#lost + 1] = i end
end
return lost
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Leases:
    """Room leases held by one node."""

    def __init__(self, redis: Redis, keys: Keys, node: str, ttl_ms: int = LEASE_MS) -> None:
        self.redis, self.keys, self.node, self.ttl_ms = redis, keys, node, ttl_ms
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    async def acquire(self, code: str) -> bool:
        """Take the room's lease if nobody holds it (or keep it if this node does); False if another node does."""
        return bool(await self._acquire(keys=[self.keys.lease(code)], args=[self.node, self.ttl_ms]))

    async def renew(self, codes: list[str]) -> list[str]:
        """Extend this node's leases of `codes`; returns the codes whose lease another node holds now.

        A lease nobody holds (Redis restarted empty) is taken again: if another node claimed the room meanwhile,
        the store's epoch refuses this node's next write of it all the same (and the room is let go then).
        """
        if not codes:
            return []
        lost = await self._renew(keys=[self.keys.lease(c) for c in codes], args=[self.node, self.ttl_ms])
        return [codes[int(i) - 1] for i in lost]

    async def release(self, code: str) -> bool:
        """Give a room's lease up (only if this node holds it)."""
        return bool(await self._release(keys=[self.keys.lease(code)], args=[self.node]))

    async def holder(self, code: str) -> str | None:
        """The node holding the room's lease now, if any."""
        value = await self.redis.get(self.keys.lease(code))
        return None if value is None else value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True, slots=True)
class Entry:
    """One room in the directory: its owner, its lobby summary (plain data) while it is listed, and who hosts it
    (the host's token hash and address: every node's room caps count every node's rooms)."""

    owner: str
    summary: dict[str, Any] | None = None
    host: tuple[str, str] | None = None

    def plain(self) -> dict[str, Any]:
        plain: dict[str, Any] = {"owner": self.owner, "summary": self.summary}
        if self.host is not None:
            plain["host"] = list(self.host)
        return plain

    @classmethod
    def of(cls, raw: Any) -> Entry:
        if not isinstance(raw, dict) or not isinstance(raw.get("owner"), str):
            raise ValueError("not a directory entry")
        summary, host = raw.get("summary"), raw.get("host")
        if not (isinstance(host, list) and len(host) == 2 and all(isinstance(part, str) for part in host)):
            host = None
        return cls(raw["owner"], summary if isinstance(summary, dict) else None, None if host is None else tuple(host))


_PUT = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('PUBLISH', KEYS[2], ARGV[4])
return 1
"""
_DELETE = """
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
if cjson.decode(v)['owner'] ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('PUBLISH', KEYS[1], ARGV[3])
return 1
"""


class Directory:
    """Every room of the cluster, mirrored in memory; `on_change(code, before, after)` hears each difference."""

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        node: str,
        on_change: Callable[[str, Entry | None, Entry | None], None],
        records: Records | None = None,
    ):
        self.redis, self.keys, self.node, self.on_change = redis, keys, node, on_change
        self.records = records  # signs the entries and deltas this node writes, checks those it reads (None: not)
        self.entries: dict[str, Entry] = {}
        self._put = redis.register_script(_PUT)
        self._delete = redis.register_script(_DELETE)

    async def load(self) -> None:
        """Read the whole directory (at start, after every reconnect): the mirror becomes exactly it."""
        raw = await self.redis.hgetall(self.keys.directory)
        fresh: dict[str, Entry] = {}
        for field, value in raw.items():
            code = field.decode() if isinstance(field, bytes) else str(field)
            try:
                fresh[code] = Entry.of(self._open(code, value))
            except ValueError:
                continue
        for code in set(self.entries) | set(fresh):
            self._set(code, fresh.get(code))

    def apply(self, data: bytes) -> None:
        """One delta from the directory's channel."""
        header, _ = unpack(data)
        code = header.get("code")
        if not isinstance(code, str):
            raise ValueError("a directory delta without a code")
        entry = header.get("entry")
        self._set(code, None if entry is None else Entry.of(entry))

    def _where(self, code: str) -> str:
        """Where a room's entry is stored (what its signature is bound to)."""
        return f"{self.keys.directory}/{code}"

    def _open(self, code: str, value: bytes | str) -> Any:
        """A stored entry's plain data: checked against its signature when entries are signed (None if it fails)."""
        return json.loads(value) if self.records is None else self.records.open(self._where(code), value)

    def _set(self, code: str, entry: Entry | None) -> None:
        before = self.entries.get(code)
        if entry == before:
            return
        if entry is None:
            del self.entries[code]
        else:
            self.entries[code] = entry
        self.on_change(code, before, entry)

    async def put(self, code: str, summary: dict[str, Any] | None, host: tuple[str, str] | None = None) -> bool:
        """Publish this node as the room's owner (with its summary and host); refused (False) unless it holds the
        lease."""
        entry = Entry(self.node, summary, host)
        if self.records is None:
            value = json.dumps(entry.plain(), separators=(",", ":"))
        else:
            value = self.records.seal(self._where(code), entry.plain())
        delta = self._signed(pack({"code": code, "entry": entry.plain()}))
        done = await self._put(keys=[self.keys.lease(code), self.keys.directory], args=[self.node, code, value, delta])
        return bool(done)

    async def delete(self, code: str) -> bool:
        """Remove the room (closed or given up) if this node is its owner in the directory."""
        delta = self._signed(pack({"code": code, "entry": None}))
        return bool(await self._delete(keys=[self.keys.directory], args=[code, self.node, delta]))

    def _signed(self, delta: bytes) -> bytes:
        """A delta as the Lua script publishes it on the directory's channel (signed, as the bus signs its own)."""
        return delta if self.records is None else self.records.sign(self.keys.directory, delta)

    def owner(self, code: str) -> str | None:
        """The room's owner as mirrored (None: no such room in the cluster, as far as this node knows)."""
        entry = self.entries.get(code)
        return None if entry is None else entry.owner
