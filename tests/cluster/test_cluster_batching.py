"""The bus batches what it sends (one PUBLISH per channel, one round trip per send) without changing any order."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from gamenight.protocol.messages import CreateRoom, Join, Moved, State
from gamenight.protocol.vocab import Role
from gamenight.server.cluster.bus import Bus, connect
from gamenight.server.cluster.coord import Keys
from gamenight.server.cluster.wire import BATCH, join_frames, pack, pack_batch, unpack, unpack_batch
from tests.cluster.helpers import eventually, listed, play_out
from tests.cluster.redisproc import RedisProcess
from tests.cluster.test_cluster_coord import until
from tests.peer import Peer
from tests.server.serverproc import ServerProcess

KEYS = Keys()


def frames_for(session: str, *frames: bytes) -> bytes:
    """An owner's message carrying frames for one session (as `RemoteSession.relay` makes it)."""
    return pack({"t": "f", "s": session, "o": "owner"}, join_frames(list(frames)))


class Receiver:
    """A node's listening side: a bus subscribed to its inbox and the shared channel, recording what it is handed."""

    def __init__(self, url: str, node: str) -> None:
        self.redis = connect(url)
        self.got: list[tuple[str, bytes]] = []
        channels = [KEYS.inbox(node), KEYS.everyone]
        self.bus = Bus(self.redis, channels, self.on_message, lambda _again: asyncio.sleep(0))

    def on_message(self, channel: str, data: bytes) -> None:
        self.got.append((channel, data))

    async def start(self) -> Receiver:
        self.bus.start()
        await until(lambda: self.bus.connected, "the receiver to subscribe")
        return self

    async def stop(self) -> None:
        await self.bus.stop()
        await self.redis.aclose()


def sender(url: str, max_batch: int = 1_000) -> Bus:
    """A node's sending side (inboxes are point-to-point channels); it subscribes to nothing of the test's."""
    return Bus(
        connect(url),
        [KEYS.inbox("sender")],
        lambda _c, _d: None,
        lambda _again: asyncio.sleep(0),
        inboxes=KEYS.inbox(""),
        max_batch=max_batch,
    )


def test_batch_wire_round_trip() -> None:
    """A batch carries its messages byte for byte and in order; a lone message travels as it is."""
    messages = [frames_for("s1", b"a"), pack({"t": "m", "s": "s2"}, b"\n\x00"), b""]
    assert unpack_batch(pack_batch(messages)) == messages
    assert pack_batch(messages[:1]) == messages[0] and unpack_batch(messages[0]) == messages[:1]
    assert pack({"t": "b"}).startswith(BATCH)
    try:
        unpack_batch(pack_batch(messages)[:-1])
    except ValueError:
        pass
    else:
        raise AssertionError("a cut batch was read")


async def test_one_publish_carries_a_turns_messages_for_an_edge_in_order(redis_server: RedisProcess) -> None:
    """Frames for several sessions of one edge, queued in one loop turn, leave as one PUBLISH; the edge is handed
    them one by one in the order they were queued (each session's frames in its order)."""
    edge = await Receiver(redis_server.url, "edge").start()
    bus = sender(redis_server.url)
    bus.start()
    try:
        sent = [frames_for(f"s{i % 3}", str(i).encode()) for i in range(12)]
        for data in sent:
            bus.publish(KEYS.inbox("edge"), data, reach=True)
        await until(lambda: len(edge.got) == len(sent), "the edge to get every message")
        assert edge.got == [(KEYS.inbox("edge"), data) for data in sent]
        await bus.drain()  # a subscriber can hear a batch before its sender has counted it
        assert (bus.published, bus.publishes, bus.round_trips) == (12, 1, 1)
    finally:
        await bus.stop()
        await bus.redis.aclose()
        await edge.stop()


async def test_a_sessions_frames_split_over_batches_stay_in_order(redis_server: RedisProcess) -> None:
    """More messages than one send takes (here 3) go in several round trips, to two edges at once; every edge gets
    its sessions' frames complete and in order, also those queued while a send was under way."""
    edges = [await Receiver(redis_server.url, "e1").start(), await Receiver(redis_server.url, "e2").start()]
    bus = sender(redis_server.url, max_batch=3)
    bus.start()
    try:
        expected: dict[str, list[bytes]] = {"e1": [], "e2": []}
        for round_ in range(3):
            for i in range(7):
                node = ("e1", "e2")[i % 2]
                data = frames_for(f"{node}-s{i % 3}", f"{round_}.{i}".encode())
                expected[node].append(data)
                bus.publish(KEYS.inbox(node), data, reach=True)
            await asyncio.sleep(0)  # the sender may be mid-send when the next messages are queued
        for edge, node in zip(edges, ("e1", "e2"), strict=True):
            await until(lambda edge=edge, node=node: len(edge.got) == len(expected[node]), f"{node}'s messages")
            assert [data for _, data in edge.got] == expected[node]
        await bus.drain()  # a subscriber can hear a batch before its sender has counted it
        assert bus.published == 21 and bus.round_trips >= 7  # at most three messages per round trip
    finally:
        await bus.stop()
        await bus.redis.aclose()
        for edge in edges:
            await edge.stop()


async def test_a_shared_channels_message_is_never_passed(redis_server: RedisProcess) -> None:
    """A node hears its inbox's and the shared channel's messages in the order they were queued: inbox messages
    are only batched past other nodes' inbox messages, not past a message every node reads."""
    node = await Receiver(redis_server.url, "n").start()
    other = await Receiver(redis_server.url, "o").start()
    bus = sender(redis_server.url)
    bus.start()
    try:
        queued = [
            (KEYS.inbox("n"), b"m1"),
            (KEYS.inbox("o"), b"o1"),
            (KEYS.everyone, b"all1"),
            (KEYS.inbox("n"), b"m2"),
            (KEYS.inbox("o"), b"o2"),
            (KEYS.inbox("n"), b"m3"),
            (KEYS.everyone, b"all2"),
            (KEYS.everyone, b"all3"),
            (KEYS.inbox("n"), b"m4"),
        ]
        for channel, data in queued:
            bus.publish(channel, data)
        mine = [(c, d) for c, d in queued if c != KEYS.inbox("o")]
        await until(lambda: len(node.got) == len(mine), "the node's messages")
        assert node.got == mine
        theirs = [(c, d) for c, d in queued if c != KEYS.inbox("n")]
        await until(lambda: len(other.got) == len(theirs), "the other node's messages")
        assert other.got == theirs
        await bus.drain()  # a subscriber can hear a batch before its sender has counted it
        assert bus.published == 9 and bus.publishes < 9  # batched where that keeps the order
    finally:
        await bus.stop()
        await bus.redis.aclose()
        await node.stop()
        await other.stop()


async def test_a_batch_for_a_dead_edge_is_held_then_handed_over_message_by_message(redis_server: RedisProcess) -> None:
    """A batch nobody received (its edge is gone) is held as a lone message would be; when the node gives that
    edge up it gets the batch's messages one by one, in order (frames are dropped, requests sent on, as before)."""
    bus = sender(redis_server.url)
    bus.start()
    try:
        sent = [frames_for("s1", b"1"), pack({"t": "m", "s": "s2", "r": "ROOM"}, b"move"), frames_for("s1", b"2")]
        for data in sent:
            bus.publish(KEYS.inbox("gone"), data, reach=True)
        await until(lambda: bus.held_channels() == [KEYS.inbox("gone")], "the batch to be held")
        bus.publish(KEYS.inbox("gone"), frames_for("s1", b"3"), reach=True)  # joins the held ones, after them
        await until(lambda: bus.pending() == 0, "the last message to be queued behind the held ones")
        assert bus.publishes == 1  # the batch went once; what followed waits behind it, unsent
        handed = bus.take_held(KEYS.inbox("gone"))
        assert handed == [*sent, frames_for("s1", b"3")]
        assert [unpack(data)[0]["t"] for data in handed] == ["f", "m", "f", "f"]
        assert bus.held_channels() == []
    finally:
        await bus.stop()
        await bus.redis.aclose()


async def test_rooms_played_at_once_through_two_nodes_keep_every_sessions_order(
    cluster: Callable[..., ServerProcess],
) -> None:
    """Four Othello rooms played at the same time by players on two nodes, watched by a spectator of all four:
    every player and the spectator get every move of every room, in order, none missing, and the same final board
    (an owner's frames for many sessions of one edge travel in shared batches)."""
    nodes = [cluster("n1"), cluster("n2")]
    alices = [await Peer.connect(nodes[0].url, f"alice{i}") for i in range(4)]
    bobs = [await Peer.connect(nodes[1].url, f"bob{i}") for i in range(4)]
    carol = await Peer.connect(nodes[1].url, "carol")
    codes: list[str] = []
    starts: list[State] = []
    for alice, bob in zip(alices, bobs, strict=True):
        code = (await alice.request(CreateRoom, game="othello", options={})).room  # placed on either node
        assert (await alice.request(Join, room=code, seat=0)).type == "joined"
        await eventually(lambda bob=bob, code=code: listed(bob, code), f"room {code} listed on n2")
        assert (await bob.request(Join, room=code, seat=1)).type == "joined"
        assert (await carol.request(Join, room=code, role=Role.SPECTATOR)).type == "joined"
        codes.append(code)
        starts.append(await alice.at(code, 1))
    finals = await asyncio.gather(
        *(
            play_out({0: alice, 1: bob}, code, start, [])
            for alice, bob, code, start in zip(alices, bobs, codes, starts, strict=True)
        )
    )
    for alice, bob, code, start, final in zip(alices, bobs, codes, starts, finals, strict=True):
        assert final.status == "finished"
        for peer in (alice, bob, carol):
            seen = await peer.at(code, final.seq)
            assert seen.view == final.view and seen.moves == final.moves
            seqs = [m.seq for m in peer.seen if isinstance(m, Moved) and m.room == code]
            assert seqs == list(range(start.seq + 1, final.seq + 1))
    for peer in (*alices, *bobs, carol):
        await peer.close()
