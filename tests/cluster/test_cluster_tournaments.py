"""Tournaments in a three-node cluster: run by one node, joined, played and followed from the others, and taken
over with their games' rooms when that node is killed."""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
import signal
from collections import Counter
from collections.abc import Callable

import pytest

from gamenight.protocol.messages import (
    Accept,
    CreateTournament,
    GetTournament,
    JoinTournament,
    ListGames,
    ListTournaments,
    Message,
)
from tests.cluster.helpers import HANG_S, eventually
from tests.peer import Peer
from tests.server.serverproc import ServerProcess
from tests.server.test_ratings_tournaments import autoplay, points_from_games

FAST_CONNECT4 = {"ai_pace_ms": 0}
TOURNAMENT_HANG_S = 240.0  # a whole tournament with people playing through Redis: a hang guard, not a timing


def key() -> str:
    """A fresh claim key."""
    return "key-" + secrets.token_urlsafe(16)


async def listed_as(peer: Peer, tid: str, status: str) -> bool:
    """True if `peer`'s node lists the tournament with this status."""
    found = await asked(peer, ListTournaments)
    return any(t["tournament"] == tid and t["status"] == status for t in found.tournaments)


async def asked(peer: Peer, msg_cls: type[Message], **fields: object) -> Message:
    """A request's reply, asked again while it is refused for the message rate (the player just played fast)."""
    async with asyncio.timeout(HANG_S):
        while True:
            reply = await peer.request(msg_cls, **fields)
            if reply.type != "error" or reply.code != "rate_limited":
                return reply
            await asyncio.sleep((reply.retry_after_ms or 50) / 1000)


async def create(host: Peer, **fields: object) -> Message:
    """Create a tournament, again while its entrants' names are not known on the host's node yet (their hellos on
    the other nodes reach it through Redis)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_S
    while True:
        reply = await host.request(CreateTournament, **fields)
        if reply.type != "error" or reply.code != "unknown_player" or loop.time() > deadline:
            return reply
        await asyncio.sleep(0.1)


def tally(games: list[dict]) -> dict[str, tuple[int, int, int, int]]:
    """Each player's (games, wins, draws, losses), counted from the games' places."""
    counts: dict[str, list[int]] = {}
    for game in games:
        best = min(game["places"])
        for player, place in zip(game["players"], game["places"], strict=True):
            row = counts.setdefault(player, [0, 0, 0, 0])
            row[0] += 1
            if place != best:
                row[3] += 1
            elif game["places"].count(best) > 1:
                row[2] += 1
            else:
                row[1] += 1
    return {player: (g, w, d, lost) for player, (g, w, d, lost) in counts.items()}


async def test_an_arena_on_one_node_is_joined_and_played_from_the_others(cluster: Callable[..., ServerProcess]):
    """An arena created on n1 is listed on n2 and n3, joined by a player on each, who play the games the server
    seats them in through their own node; at the end every node shows the same standings, which follow the games."""
    nodes = [cluster("n1"), cluster("n2"), cluster("n3")]
    alice = await Peer.connect(nodes[0].url, "alice", key=key())
    bob = await Peer.connect(nodes[1].url, "bob", key=key())
    carol = await Peer.connect(nodes[2].url, "carol", key=key())
    reply = await alice.request(
        CreateTournament,
        game="connect4",
        kind="arena",
        options=FAST_CONNECT4,
        players=["AI level 1", "AI level 2"],
        duration_s=15,
    )
    assert reply.type == "tournament" and reply.status == "running", reply
    tid = reply.tournament
    for peer in (bob, carol):
        await eventually(lambda peer=peer: listed_as(peer, tid, "running"), "the arena listed on the player's node")
        joined = await asked(peer, JoinTournament, tournament=tid)
        assert joined.type == "tournament" and joined.tournament == tid, joined
    seen = await asked(carol, GetTournament, tournament=tid)
    assert {"bob", "carol"} <= set(seen.entries)
    finals = await asyncio.gather(autoplay(bob, tid, TOURNAMENT_HANG_S), autoplay(carol, tid, TOURNAMENT_HANG_S))
    assert all(final.status == "finished" for final in finals)
    views = [await asked(peer, GetTournament, tournament=tid) for peer in (alice, bob, carol)]
    assert all(view.type == "tournament" for view in views), views
    assert views[0].standings == views[1].standings == views[2].standings
    assert views[0].games == views[1].games == views[2].games
    final = views[0]
    assert all(g["places"] is not None for g in final.games)
    played = {p for g in final.games for p in g["players"]}
    assert {"bob", "carol"} <= played, "each person played at least one game from their own node"
    counts = tally(final.games)
    for row in final.standings:
        assert (row["games"], row["wins"], row["draws"], row["losses"]) == counts.get(row["player"], (0, 0, 0, 0))
        assert row["points"] >= 2 * row["wins"] + row["draws"]  # win 2 (4 on a streak), draw 1 (2 on a streak)
    order = [row["points"] for row in final.standings]
    assert order == sorted(order, reverse=True)
    for peer in (alice, bob, carol):
        await eventually(lambda peer=peer: listed_as(peer, tid, "finished"), "the arena listed finished")
    for peer in (alice, bob, carol):
        await peer.close()


async def test_the_node_running_a_round_robin_is_killed_and_it_finishes_elsewhere(
    cluster: Callable[..., ServerProcess],
):
    """SIGKILL the node running a round robin (with people on the other two nodes and AIs) mid-tournament: another
    node takes the tournament and its games in progress over, the people go on playing where they are, and it
    finishes with every game played once, the games finished before the kill unchanged, the same standings on
    both surviving nodes. The people are invited from n1 and accept through their own nodes before it starts."""
    nodes = [cluster("n1"), cluster("n2"), cluster("n3")]
    alice = await Peer.connect(nodes[0].url, "alice", key=key())
    bob = await Peer.connect(nodes[1].url, "bob", key=key(), accepts=["connect4"])
    carol = await Peer.connect(nodes[2].url, "carol", key=key(), accepts=["connect4"])
    entrants = ["bob", "carol", "AI level 1", "AI level 2"]
    reply = await create(
        alice, game="connect4", kind="round_robin", options=FAST_CONNECT4, players=entrants, rated=True
    )
    assert reply.type == "tournament" and reply.status == "waiting" and reply.invited == ["bob", "carol"], reply
    tid = reply.tournament
    for peer in (bob, carol):
        offer = await peer.expect("challenged")
        assert offer.tournament is not None and offer.tournament.tournament == tid
        accepted = await asked(peer, Accept, challenge=offer.challenge)
        assert accepted.type == "tournament" and accepted.tournament == tid, accepted
    players = [asyncio.create_task(autoplay(peer, tid, TOURNAMENT_HANG_S)) for peer in (bob, carol)]
    async with asyncio.timeout(TOURNAMENT_HANG_S):
        while True:
            before = await alice.wait(lambda m: m.type == "tournament" and m.tournament == tid)
            if sum(g["places"] is not None for g in before.games) >= 3:
                break
    assert before.status == "running"
    nodes[0].kill()
    await alice.close()
    finals = await asyncio.gather(*players)
    assert all(final.status == "finished" for final in finals)
    views = [await asked(peer, GetTournament, tournament=tid) for peer in (bob, carol)]
    assert all(view.type == "tournament" for view in views), views
    assert views[0].standings == views[1].standings and views[0].games == views[1].games
    final = views[0]
    games = final.games
    assert len(games) == 12 and all(g["places"] is not None and g["room"] for g in games)
    assert Counter(tuple(g["players"]) for g in games) == Counter(itertools.permutations(entrants, 2))
    assert all(g in games for g in before.games if g["places"] is not None), "a game finished before the kill changed"
    table = {row["player"]: row for row in final.standings}
    assert {p: table[p]["points"] for p in entrants} == pytest.approx(points_from_games(games))
    order = [row["points"] for row in final.standings]
    assert order == sorted(order, reverse=True)
    for peer in (bob, carol):
        await eventually(lambda peer=peer: listed_as(peer, tid, "finished"), "the round robin listed finished")
        await peer.close()


@pytest.mark.slow
async def test_a_paused_tournament_node_cannot_write_after_another_took_over(cluster: Callable[..., ServerProcess]):
    """SIGSTOP the node running a round robin of AIs until another node has taken it over, then SIGCONT it: the old
    node's late writes are refused by the store's epoch (split brain), it lets the tournament go, and the tournament
    finishes once: every game once in the standings and once in the history."""
    nodes = [cluster("n1"), cluster("n2"), cluster("n3")]
    alice = await Peer.connect(nodes[0].url, "alice", key=key())
    bob = await Peer.connect(nodes[1].url, "bob", key=key())
    entrants = ["AI level 1", "AI level 2", "AI level 3", "AI level 4"]
    reply = await alice.request(
        CreateTournament, game="connect4", kind="round_robin", options=FAST_CONNECT4, players=entrants
    )
    assert reply.type == "tournament" and reply.status == "running", reply
    tid = reply.tournament
    async with asyncio.timeout(TOURNAMENT_HANG_S):
        while True:
            before = await alice.wait(lambda m: m.type == "tournament" and m.tournament == tid)
            if sum(g["places"] is not None for g in before.games) >= 2:
                break
    paused = nodes[0].proc
    assert paused is not None
    os.kill(paused.pid, signal.SIGSTOP)
    try:

        async def taken_over() -> bool:
            try:
                return (await asked(bob, GetTournament, tournament=tid)).type == "tournament"
            except TimeoutError:
                return False  # forwarded to the stopped node, which cannot answer

        await eventually(taken_over, "the round robin run by another node")  # n1 cannot answer while stopped
        await asyncio.sleep(1.0)  # its games go on there meanwhile
    finally:
        os.kill(paused.pid, signal.SIGCONT)

    async def finished() -> bool:
        view = await asked(bob, GetTournament, tournament=tid)
        return view.type == "tournament" and view.status == "finished"

    async with asyncio.timeout(TOURNAMENT_HANG_S):
        while not await finished():
            await asyncio.sleep(0.5)
    final = await asked(bob, GetTournament, tournament=tid)
    games = final.games
    assert len(games) == 12 and all(g["places"] is not None and g["room"] for g in games)
    assert Counter(tuple(g["players"]) for g in games) == Counter(itertools.permutations(entrants, 2))
    for game in games:
        history = await asked(bob, ListGames, room=game["room"])
        played = [g for g in history.games if [p["name"] for p in g["players"]] == game["players"]]
        assert len(played) == 1, (game, history.games)
    table = {row["player"]: row for row in final.standings}
    assert {p: table[p]["points"] for p in entrants} == pytest.approx(points_from_games(games))
    await bob.close()
    await alice.close()
