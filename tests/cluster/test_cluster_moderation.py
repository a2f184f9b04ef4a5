"""Moderation across a cluster's nodes (issue 37): an admin connected to one node acts on players, rooms and
tournaments of another, and every node holds the bans and mutes."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable

from gamenight.protocol.messages import Chat, CreateRoom, CreateTournament, Join, ListPlayers, ListRooms, Moderate
from gamenight.server.__main__ import main
from gamenight.server.cluster.bus import connect
from gamenight.server.cluster.coord import Keys
from tests.cluster.helpers import eventually
from tests.cluster.redisproc import RedisProcess
from tests.cluster.test_cluster_nodes import owner
from tests.peer import Peer
from tests.server.serverproc import ServerProcess
from tests.server.test_identity import refused_hello
from tests.server.test_moderation import closed_with

BOSS_KEY = "b" * 8 + secrets.token_urlsafe(16)


async def tournament_node(redis_server: RedisProcess, tid: str) -> str | None:
    """The node running a tournament, as the cluster's tournament directory in Redis says."""
    redis = connect(redis_server.url)
    try:
        raw = await redis.hget(Keys("gn:t:").directory, tid)
    finally:
        await redis.aclose()
    return None if raw is None else str(json.loads(raw)["owner"])


async def an_admin(nodes: list[ServerProcess], cluster_db: str) -> Peer:
    """ "boss" claimed on the first node and named an admin with the real `gamenight-server admin add` on the
    cluster's store, connected to the first node once every node has read the list (each reads it every few
    seconds, and the node carrying out a forwarded action checks the admin itself)."""
    await (await Peer.connect(nodes[0].url, "boss", key=BOSS_KEY)).close()
    assert main(["--db", cluster_db, "admin", "add", "boss"]) == 0
    held: list[Peer] = []
    for node in nodes[::-1]:

        async def admin_now(url: str = node.url) -> bool:
            if held:
                await held.pop().close()
            held.append(await Peer.connect(url, "boss", key=BOSS_KEY))
            return held[-1].welcome.admin

        await eventually(admin_now, f"{node.url} to read the new admin")
    return held[-1]


async def test_an_admin_on_one_node_moderates_what_another_node_holds(
    cluster: Callable[..., ServerProcess], cluster_db: str, redis_server: RedisProcess
) -> None:
    """An admin connected to n1 kicks and bans a player connected to n2 (n2 closes the connection; both nodes refuse
    the name's hello), mutes a player whose room n2 owns (n2 refuses the chat), closes that room and calls off a
    tournament n2 runs."""
    nodes = [cluster("n1"), cluster("n2")]
    boss = await an_admin(nodes, cluster_db)
    eve = await Peer.connect(nodes[1].url, "eve")

    async def sees_eve() -> bool:
        return "eve" in {p.name for p in (await boss.request(ListPlayers)).players}

    await eventually(sees_eve, "n1 to see eve, connected to n2")
    kicked = await boss.request(Moderate, action="kick", target="eve", reason="flooding")
    assert kicked.type == "moderated"
    assert "flooding" in await closed_with(eve, "kicked")

    eve = await Peer.connect(nodes[1].url, "eve")
    banned = await boss.request(Moderate, action="ban", target="eve", reason="again", duration_s=600)
    assert banned.type == "moderated"
    await closed_with(eve, "banned")
    for node in nodes:
        refused = await refused_hello(node.url, "eve")
        assert refused.code == "banned" and refused.until == banned.until

    mallory = await Peer.connect(nodes[1].url, "mallory", key="m" * 8 + secrets.token_urlsafe(16))
    room = (await mallory.request(CreateRoom, game="othello", options={})).room

    async def owned_by_n2() -> bool:
        return await owner(redis_server, room) == "n2"

    await eventually(owned_by_n2, "n2 to own the new room in the cluster's directory")
    await mallory.request(Join, room=room, seat=0)
    muted = await boss.request(Moderate, action="mute", target="mallory", reason="insults", duration_s=300)
    assert muted.type == "moderated"

    tries = iter(range(1000, 2000))

    async def chat_refused() -> bool:
        ask = next(tries)
        await mallory.send(Chat(room=room, text=f"still here {ask}", id=ask))
        said = await mallory.wait(
            lambda m: (
                (m.type == "error" and m.id == ask)
                or (m.type == "event" and m.kind == "chat" and m.data["text"] == f"still here {ask}")
            )
        )
        return said.type == "error" and said.code == "muted" and said.until == muted.until

    await eventually(chat_refused, "n2 to refuse the muted player's chat")

    async def listed_at_n1() -> bool:  # n1 mirrors the directory from the bus: it knows where to send the close
        return room in {r.room for r in (await boss.request(ListRooms)).rooms}

    await eventually(listed_at_n1, "n1 to list n2's room")
    closed = await boss.request(Moderate, action="close_room", room=room, reason="abuse")
    assert closed.type == "moderated" and closed.target == room, closed

    async def room_gone() -> bool:
        return room not in {r.room for r in (await boss.request(ListRooms)).rooms}

    await eventually(room_gone, "the closed room to leave the cluster's listing")
    made = await mallory.request(
        CreateTournament, game="othello", kind="round_robin", players=["AI level 1", "AI level 2"], start_in_s=600
    )
    assert made.type == "tournament"

    async def run_by_n2() -> bool:  # the directory entry is published on the bus after the reply
        return await tournament_node(redis_server, made.tournament) == "n2"

    await eventually(run_by_n2, "n2 to publish its tournament in the cluster's directory")
    called_off = await boss.request(Moderate, action="cancel_tournament", tournament=made.tournament, reason="spam")
    assert called_off.type == "moderated"
    await mallory.wait(lambda m: m.type == "tournament" and m.tournament == made.tournament and m.status == "cancelled")
    for peer in (boss, mallory):
        await peer.close()
