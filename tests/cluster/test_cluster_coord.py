"""The cluster's coordination over a real redis-server: bus, registry, leases, directory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from gamenight.server.cluster.bus import Bus, connect
from gamenight.server.cluster.coord import Directory, Entry, Keys, Leases, NodeInfo, Registry, place
from gamenight.server.cluster.wire import join_frames, pack, split_frames, unpack, unpack_batch
from tests.cluster.redisproc import RedisProcess

HANG_S = 60.0  # hang guard for conditions that take a moment (never a speed assertion)


async def until(condition: Callable[[], Any], what: str) -> None:
    """Wait until `condition()` is true (checked every 20 ms), failing after the hang guard."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_S
    while not condition():
        if loop.time() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def retrying(call: Callable[[], Any]) -> Any:
    """Run a Redis command, again while the connection is being re-made after a restart (bounded by the guard)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_S
    while True:
        try:
            return await call()
        except Exception:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)


def test_wire_round_trip() -> None:
    """A bus message keeps its header and its frames byte for byte (forwarded frames are relayed unchanged)."""
    frames = [b"", b"\x00\x01\n", bytes(range(256))]
    header, body = unpack(pack({"t": "f", "s": "abc"}, join_frames(frames)))
    assert header == {"t": "f", "s": "abc"}
    assert split_frames(body) == frames
    with pytest.raises(ValueError):
        split_frames(join_frames(frames)[:-1])


def test_placement_prefers_fewest_rooms_then_the_edge() -> None:
    """A new room goes to the live node with the fewest rooms; on a tie the node the client is on keeps it."""
    live = {"a": NodeInfo("a", "", 3, 0), "b": NodeInfo("b", "", 1, 0), "c": NodeInfo("c", "", 1, 0)}
    assert place(live, "a", 3) == "b"
    assert place(live, "c", 1) == "c"
    assert place({}, "a", 5) == "a"


async def test_lease_belongs_to_its_node(redis_server: RedisProcess) -> None:
    """Only the node holding a room's lease can renew or release it; another node's acquire is refused."""
    redis = connect(redis_server.url)
    try:
        keys = Keys()
        a, b = Leases(redis, keys, "a"), Leases(redis, keys, "b")
        assert await a.acquire("ROOM1")
        assert not await b.acquire("ROOM1")
        assert await b.renew(["ROOM1"]) == ["ROOM1"]
        assert not await b.release("ROOM1")
        assert await a.renew(["ROOM1"]) == []
        assert await a.holder("ROOM1") == "a"
        assert await a.release("ROOM1")
        assert await b.acquire("ROOM1")
        assert await a.renew(["ROOM1"]) == ["ROOM1"]
        assert await a.renew(["LOST1"]) == []  # nobody held it (Redis restarted empty): taken again
        assert await b.holder("LOST1") == "a"
    finally:
        await redis.aclose()


async def test_expired_lease_is_claimable(redis_server: RedisProcess) -> None:
    """A lease its owner stopped renewing expires and another node can take the room."""
    redis = connect(redis_server.url)
    try:
        keys = Keys()
        a, b = Leases(redis, keys, "a", ttl_ms=150), Leases(redis, keys, "b", ttl_ms=150)
        assert await a.acquire("ROOM2")
        holder: list[str | None] = ["a"]

        async def look() -> None:
            holder[0] = await a.holder("ROOM2")

        while holder[0] is not None:  # bounded by the key's TTL; the hang guard below catches a bug
            await asyncio.wait_for(look(), HANG_S)
            await asyncio.sleep(0.05)
        assert await b.acquire("ROOM2")
        assert await a.renew(["ROOM2"]) == ["ROOM2"]
    finally:
        await redis.aclose()


async def test_registry_tells_live_from_dead(redis_server: RedisProcess) -> None:
    """A node whose heartbeat stops is seen as dead once its key expires; a live one shows its rooms."""
    redis = connect(redis_server.url)
    try:
        keys = Keys()
        a = Registry(redis, keys, "a", "ws://a", ttl_ms=60_000)
        b = Registry(redis, keys, "b", "ws://b", ttl_ms=150)
        await a.beat(rooms=4, connections=2)
        await b.beat(rooms=0, connections=0)
        found: dict[str, set[str]] = {}

        async def dead_now() -> bool:
            live, dead = await a.refresh()
            found["live"], found["dead"] = set(live), dead
            return "b" in dead

        loop = asyncio.get_running_loop()
        deadline = loop.time() + HANG_S
        while not await dead_now():
            assert loop.time() < deadline, "b never expired"
            await asyncio.sleep(0.05)
        assert found["live"] == {"a"}
        assert a.live["a"] == NodeInfo("a", "ws://a", 4, 2, a.run)
        await a.forget("b")
        assert (await a.refresh())[1] == set()
    finally:
        await redis.aclose()


async def test_directory_writes_need_the_lease(redis_server: RedisProcess) -> None:
    """Only the lease holder publishes a room's entry, and only its directory owner removes it."""
    redis = connect(redis_server.url)
    try:
        keys = Keys()
        seen: list[tuple[str, Entry | None]] = []
        a = Directory(redis, keys, "a", lambda code, _before, after: seen.append((code, after)))
        b = Directory(redis, keys, "b", lambda *_: None)
        assert not await a.put("ROOM3", {"room": "ROOM3"})
        assert await Leases(redis, keys, "a").acquire("ROOM3")
        assert await a.put("ROOM3", {"room": "ROOM3"})
        assert not await b.put("ROOM3", None)
        assert not await b.delete("ROOM3")
        await b.load()
        assert b.owner("ROOM3") == "a"
        assert await a.delete("ROOM3")
        await b.load()
        assert b.owner("ROOM3") is None
    finally:
        await redis.aclose()


async def test_bus_reconnects_and_rereads_the_directory(redis_server: RedisProcess) -> None:
    """After Redis restarts (empty), the bus subscribes again, the directory is re-read, and messages flow again."""
    redis, other = connect(redis_server.url), connect(redis_server.url)
    keys = Keys()
    directory = Directory(redis, keys, "a", lambda *_: None)
    inbox: list[bytes] = []
    reconnects: list[bool] = []

    def on_message(channel: str, data: bytes) -> None:
        if channel == keys.directory:
            directory.apply(data)
        else:
            inbox.append(data)

    async def on_connected(again: bool) -> None:
        reconnects.append(again)
        await directory.load()

    bus = Bus(redis, [keys.inbox("a"), keys.directory], on_message, on_connected)
    writer = Directory(other, keys, "b", lambda *_: None)
    try:
        assert await Leases(other, keys, "b").acquire("OLD11")
        assert await writer.put("OLD11", None)
        bus.start()
        await until(lambda: directory.owner("OLD11") == "b", "the first directory read")
        assert await Leases(other, keys, "b").acquire("DELTA")
        assert await writer.put("DELTA", {"room": "DELTA"})
        await until(lambda: directory.owner("DELTA") == "b", "a directory delta")

        redis_server.restart()  # everything in Redis is gone; the bus's connection is cut
        assert await retrying(lambda: Leases(other, keys, "b").acquire("NEW22"))
        assert await retrying(lambda: writer.put("NEW22", None))
        await until(lambda: reconnects == [False, True], "the bus to reconnect")
        await until(lambda: set(directory.entries) == {"NEW22"}, "the directory to be re-read")

        bus.publish(keys.inbox("a"), b"after")
        await until(lambda: inbox == [b"after"], "a message after the reconnect")
    finally:
        await bus.stop()
        await redis.aclose()
        await other.aclose()


async def test_sender_waits_for_redis_and_keeps_order(redis_server: RedisProcess) -> None:
    """Publishes queued while Redis is down go out, in order, once it is back and their receiver has subscribed
    again (nothing queued is lost)."""
    redis, reader = connect(redis_server.url), connect(redis_server.url)
    keys = Keys()
    bus = Bus(redis, [keys.inbox("x")], lambda _c, _d: None, lambda _again: asyncio.sleep(0))
    try:
        async with asyncio.timeout(HANG_S * 2):  # a hang guard: a hang here fails with where it hung
            await sender_keeps_order(bus, redis_server, reader, keys)
    finally:
        async with asyncio.timeout(HANG_S):  # (the clients' cleanup is guarded too)
            await bus.stop()
            await redis.aclose()
            await reader.aclose()


async def sender_keeps_order(bus: Bus, redis_server: RedisProcess, reader: Redis, keys: Keys) -> None:
    """The body of test_sender_waits_for_redis_and_keeps_order."""
    received: list[bytes] = []
    bus.start()
    redis_server.stop()
    for number in range(5):
        bus.publish(keys.inbox("z"), str(number).encode(), reach=True)
    await asyncio.sleep(0.3)  # the sender meets the dead Redis and backs off (not a timing assertion)
    redis_server.start()
    pubsub = reader.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(keys.inbox("z"))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_S
    while len(received) < 5 and loop.time() < deadline:
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.2)
        if message is not None:
            received.extend(unpack_batch(message["data"]))  # the five may travel as one batch
    await pubsub.aclose()
    assert received == [b"0", b"1", b"2", b"3", b"4"]
