"""Three node processes sharing one Redis and one database act as one server for clients on any of them."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable

import pytest

from gamenight.protocol.messages import CreateRoom, Join, LobbyWatch
from gamenight.protocol.vocab import Role
from gamenight.server.cluster.bus import connect
from gamenight.server.cluster.coord import Keys
from tests.cluster.helpers import eventually, listed, play_out
from tests.cluster.redisproc import RedisProcess
from tests.peer import Peer
from tests.server.serverproc import ServerProcess


@pytest.mark.parametrize("cluster_db", ["postgresql", "sqlite"], indirect=True)
async def test_three_nodes_play_one_room(cluster: Callable[..., ServerProcess]) -> None:
    """Players on two nodes and a spectator on a third create, list, join, play Othello to the end and watch it:
    everyone sees the same moves and the same final board, every node's lobby lists the room, and each node counts
    the people online on all three."""
    nodes = [cluster("n1"), cluster("n2"), cluster("n3")]
    alice = await Peer.connect(nodes[0].url, "alice")
    bob = await Peer.connect(nodes[1].url, "bob")
    carol = await Peer.connect(nodes[2].url, "carol")
    await eventually(lambda: online_count(carol, 3), "n3 counting everyone online on the three nodes")
    created = await alice.request(CreateRoom, game="othello", options={})
    code = created.room
    for peer in (bob, carol, alice):
        await eventually(lambda peer=peer: listed(peer, code), f"room {code} listed on every node")
    assert (await alice.request(Join, room=code, seat=0)).type == "joined"
    assert (await bob.request(Join, room=code, seat=1)).type == "joined"
    watched = await carol.request(Join, room=code, role=Role.SPECTATOR)
    assert watched.type == "joined"
    start = await alice.at(code, 1)
    final = await play_out({0: alice, 1: bob}, code, start, [carol])
    assert final.status == "finished" and final.result is not None
    boards = [(await peer.at(code, final.seq)) for peer in (alice, bob, carol)]
    assert all(b.view == final.view and b.result == final.result for b in boards)
    assert [b.moves for b in boards] == [final.moves] * 3
    for peer in (alice, bob, carol):
        await peer.close()


async def test_new_rooms_go_to_the_emptiest_node_and_lobby_pushes_reach_every_node(
    cluster: Callable[..., ServerProcess], redis_server: RedisProcess
) -> None:
    """A room created on a busy node is placed on a node with fewer rooms (transparently to its creator), and
    lobby watchers on every node get a push for it."""
    nodes = [cluster("n1"), cluster("n2")]
    alice = await Peer.connect(nodes[0].url, "alice")
    watcher = await Peer.connect(nodes[1].url, "watcher")
    await watcher.request(LobbyWatch, on=True)
    first = (await alice.request(CreateRoom, game="connect4", options={})).room
    await eventually(lambda: listed(watcher, first), "the first room listed on n2")
    await eventually(lambda: knows(nodes[0], "n2"), "n1 to see n2 alive")
    second = (await alice.request(CreateRoom, game="othello", options={})).room
    pushed = await watcher.wait(lambda m: m.type == "lobby" and any(r.room == second for r in m.rooms))
    assert pushed.rooms
    assert await owner(redis_server, first) == "n1" and await owner(redis_server, second) == "n2"
    assert (await alice.request(Join, room=second, seat=0)).type == "joined"
    bob = await Peer.connect(nodes[0].url, "bob")
    assert (await bob.request(Join, room=second, seat=1)).type == "joined"
    state = await alice.at(second, 1)
    state = await play_out({0: alice, 1: bob}, second, state, [], moves=4)
    assert len(state.moves) == 4
    for peer in (alice, bob, watcher):
        await peer.close()


async def owner(redis_server: RedisProcess, code: str) -> str | None:
    """The room's owner as the cluster's directory in Redis says."""
    redis = connect(redis_server.url)
    try:
        raw = await redis.hget(Keys().directory, code)
    finally:
        await redis.aclose()
    return None if raw is None else str(json.loads(raw)["owner"])


async def online_count(peer: Peer, at_least: int) -> bool:
    """True once the peer's node counts at least `at_least` people online (its own and the other nodes')."""
    reply = await peer.request(LobbyWatch, on=False)
    return reply.counts.online >= at_least


async def knows(node: ServerProcess, other: str) -> bool:
    """True once the node's /healthz lists `other` among the live nodes."""
    with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/healthz", timeout=5) as reply:
        body = reply.read().decode()
    return other in body.split("live nodes:", 1)[1].split(";", 1)[0].split()
