"""Ratings across nodes: a rated game on one node starts from the ratings another node's game left."""

from __future__ import annotations

from collections.abc import Callable

from gamenight.protocol.messages import Profile
from tests.peer import Peer
from tests.server.serverproc import ServerProcess
from tests.server.test_ratings import alice_resigns, by_name, key, rated_game


async def test_second_rated_game_on_another_node_builds_on_the_first(cluster: Callable[..., ServerProcess]) -> None:
    """Two claimed players finish a rated game owned by n1, then another owned by n2: the second starts from the
    ratings the first gave (n2 loaded its ratings before either game), and the profile counts both games."""
    nodes = [cluster("n1"), cluster("n2")]
    alice_key, bob_key = key(), key()
    alice = await Peer.connect(nodes[0].url, "alice", key=alice_key)
    bob = await Peer.connect(nodes[0].url, "bob", key=bob_key)
    code = await rated_game(alice, bob)
    final, _ = await alice_resigns(alice, bob, code)
    first = by_name(final.result.ratings)
    await alice.close()
    await bob.close()
    alice = await Peer.connect(nodes[1].url, "alice", key=alice_key)
    bob = await Peer.connect(nodes[1].url, "bob", key=bob_key)
    assert alice.welcome.claimed and bob.welcome.claimed
    code = await rated_game(alice, bob)
    final, _ = await alice_resigns(alice, bob, code)
    second = by_name(final.result.ratings)
    assert second["alice"].before == first["alice"].after and second["bob"].before == first["bob"].after
    card = await bob.request(Profile, name="bob")
    assert card.ratings[0].games == 2 and card.ratings[0].wins == 2
    await alice.close()
    await bob.close()
