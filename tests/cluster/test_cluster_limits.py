"""Per-address limits hold over the whole cluster, not per node (a client may connect to any node directly)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gamenight.protocol import ErrorCode
from gamenight.protocol.messages import CreateRoom
from tests.cluster.helpers import eventually, listed
from tests.peer import Peer
from tests.server.serverproc import ServerProcess

CAP = ("--limit", "max_connections_per_ip=3")


async def refused(url: str) -> str | None:
    """The reason a node closed a new connection with at once (None: it stayed open for a hello)."""
    ws = await connect(url)
    try:
        await ws.recv()
    except ConnectionClosed as closed:
        return closed.rcvd.reason if closed.rcvd is not None else ""
    finally:
        await ws.close()
    return None


async def test_connections_per_address_are_capped_over_all_nodes(cluster: Callable[..., ServerProcess]) -> None:
    """With a cap of three connections per address, two open on n1 and one on n2 leave no place on either node;
    one closing frees a place on the other."""
    nodes = [cluster("n1", *CAP), cluster("n2", *CAP)]
    await eventually(lambda: both_live(nodes[0].url), "n1 knowing both nodes")
    held = [await Peer.connect(nodes[0].url, "a"), await Peer.connect(nodes[0].url, "b")]
    held.append(await Peer.connect(nodes[1].url, "c"))
    assert await refused(nodes[1].url) == "too many connections from your address"
    assert await refused(nodes[0].url) == "too many connections from your address"
    await held.pop(0).close()
    await eventually(lambda: admitted(nodes[1].url), "a place free again, on n2")
    for peer in held:
        await peer.close()


@pytest.mark.slow
async def test_a_dead_nodes_connections_stop_counting(cluster: Callable[..., ServerProcess]) -> None:
    """The connections a killed node had open do not hold places: once it is dead, the others admit again."""
    nodes = [cluster("n1", *CAP), cluster("n2", *CAP)]
    await eventually(lambda: both_live(nodes[0].url), "n1 knowing both nodes")
    held = [await Peer.connect(nodes[0].url, name) for name in ("a", "b", "c")]
    assert await refused(nodes[1].url) == "too many connections from your address"
    nodes[0].kill()
    await eventually(lambda: admitted(nodes[1].url), "n2 admitting once n1 is dead")
    for peer in held:
        await peer.close()


async def admitted(url: str) -> bool:
    """Whether a node takes a new connection from this address now (closed again at once)."""
    try:
        peer = await Peer.connect(url, "probe")
    except ConnectionClosed:
        return False
    await peer.close()
    return True


async def both_live(url: str) -> bool:
    """Whether the node's welcome lists two nodes."""
    probe = await Peer.connect(url, "probe")
    await probe.close()
    return len(probe.welcome.nodes) == 2


async def test_rooms_per_address_are_capped_over_all_nodes(cluster: Callable[..., ServerProcess]) -> None:
    """With a cap of two open rooms per address, a room hosted on n1 and one on n2 leave no third on either node."""
    nodes = [cluster("n1", "--limit", "rooms_per_ip=2"), cluster("n2", "--limit", "rooms_per_ip=2")]
    await eventually(lambda: both_live(nodes[0].url), "n1 knowing both nodes")
    one, two = await Peer.connect(nodes[0].url, "one"), await Peer.connect(nodes[1].url, "two")
    codes = [(await peer.request(CreateRoom, game="othello", options={})).room for peer in (one, two)]
    for peer in (one, two):
        for code in codes:
            await eventually(lambda peer=peer, code=code: listed(peer, code), "both rooms listed on both nodes")
    for peer in (one, two):
        refusal = await peer.request(CreateRoom, game="othello", options={})
        assert refusal.type == "error" and refusal.code == ErrorCode.TOO_MANY
    for peer in (one, two):
        await peer.close()
