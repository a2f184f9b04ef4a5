"""Presence and challenges across nodes: who is online anywhere, and a challenge reaching a bot on another node."""

from __future__ import annotations

from collections.abc import Callable

from gamenight.protocol.messages import Accept, ChallengeRequest, ListPlayers, LobbyWatch, MakeMove
from tests.cluster.helpers import eventually
from tests.peer import Peer
from tests.server.serverproc import ServerProcess

KEY = "k" * 24


async def online(peer: Peer, name: str) -> bool:
    """True if `peer`'s node lists `name` among the players online."""
    players = await peer.request(ListPlayers)
    return name in [p.name for p in players.players]


async def test_challenge_from_node_a_reaches_a_bot_on_node_c(cluster: Callable[..., ServerProcess]) -> None:
    """A player on n1 watching the lobby is told when a bot connects to n3, sees it online, challenges it, the bot
    accepts, and they play."""
    nodes = [cluster("n1"), cluster("n2"), cluster("n3")]
    alice = await Peer.connect(nodes[0].url, "alice")
    await alice.request(LobbyWatch, on=True)
    rhino = await Peer.connect(nodes[2].url, "rhino", key=KEY + "rhino", bot=True, accepts=["othello"])
    arrived = await alice.player("rhino", online=True)
    assert arrived.bot
    carol = await Peer.connect(nodes[1].url, "carol")
    await eventually(lambda: online(alice, "rhino"), "the bot on n3 online as seen from n1")
    await eventually(lambda: online(rhino, "alice"), "alice on n1 online as seen from n3")
    await eventually(lambda: online(carol, "rhino"), "the bot online as seen from n2")
    sent = await alice.request(ChallengeRequest, to="rhino", game="othello", options={}, seat=1)
    assert sent.type == "challenge_sent" and sent.to == "rhino", sent
    offer = await rhino.expect("challenged", challenge=sent.challenge)
    assert offer.sender.name == "alice" and offer.game == "othello"
    joined = await rhino.request(Accept, challenge=offer.challenge)
    assert joined.type == "joined" and joined.seat == 0
    gone = await alice.expect("challenge_gone", challenge=sent.challenge)
    assert gone.why == "accepted" and gone.room == joined.room
    state = await rhino.at(joined.room, 1)
    await rhino.send(MakeMove(room=joined.room, move=state.legal[0], seq=state.seq))
    after = await alice.at(joined.room, state.seq + 1)
    assert after.moves == [state.legal[0]]
    await rhino.close()
    await eventually(lambda: _not(online(alice, "rhino")), "the bot gone from n1's players once it left")
    for peer in (alice, carol):
        await peer.close()


async def _not(check: object) -> bool:
    """The negation of an awaitable check."""
    return not await check  # type: ignore[misc]
