"""Floods of challenges and tournaments from one address (issue 37): capped with stable codes, while a person on
another address still challenges and hosts; watchers of a tournament are forgotten with their session.

The attacker connects from 127.0.0.2, the honest players from 127.0.0.1: two addresses to the server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import pytest

from gamenight.protocol.messages import ChallengeRequest, CreateTournament, GetTournament, ListTournaments
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.sessions import SESSION_GRACE_S
from tests.peer import Peer
from tests.server.test_ratings_tournaments import key
from tests.waiting import eventually

ATTACKER = "127.0.0.2"
AI_ONLY = ["AI level 1", "AI level 2"]


@pytest.fixture
def make_server(server_with, tmp_path: Path) -> Callable[..., Awaitable[GameServer]]:
    """Starts an in-process server on a real SQLite file with the given lobby limits (conftest's `server_with`)."""
    return partial(server_with, ServerConfig(port=0, ai_workers=1, db=str(tmp_path / "games.db")))


async def connect(server: GameServer, name: str, address: str | None = None, **hello: object) -> Peer:
    """A person taking challenges for Connect Four, from `address` (default 127.0.0.1)."""
    return await Peer.connect(f"ws://127.0.0.1:{server.port}", name, address=address, accepts=["connect4"], **hello)


async def test_one_address_cannot_stack_challenges_on_a_player(make_server):
    """Six sessions of one address challenging one player get two through (`too_many` after): the player sees two
    dialogs, not six, and a friend on another address can still challenge them."""
    server = await make_server()
    victim = await connect(server, "victim")
    replies = []
    for n in range(6):
        attacker = await connect(server, f"spam{n}", ATTACKER)
        replies.append(await attacker.request(ChallengeRequest, to="victim", game="connect4"))
    assert [r.type for r in replies] == ["challenge_sent"] * 2 + ["error"] * 4
    assert {r.code for r in replies[2:]} == {"too_many"}
    friend = await connect(server, "friend")
    sent = await friend.request(ChallengeRequest, to="victim", game="connect4")
    assert sent.type == "challenge_sent"
    offers = [await victim.expect("challenged") for _ in range(3)]
    assert [offer.sender.name for offer in offers] == ["spam0", "spam1", "friend"]
    assert not [m for m in victim.inbox if m.type == "challenged"]


async def test_challenges_from_one_address_are_paced_with_a_retry_time(make_server):
    """Past its burst, an address's challenges are refused `rate_limited` with `retry_after_ms` (one a
    `challenges_per_min`-th of a minute), whoever they go to; another address is not slowed."""
    server = await make_server(challenges_per_min=6, challenge_burst=3, challenges_per_ip=0, challenges_per_player=0)
    targets = [await connect(server, f"target{n}") for n in range(4)]
    attacker = await connect(server, "spammer", ATTACKER)
    replies = [await attacker.request(ChallengeRequest, to=t.welcome.name, game="connect4") for t in targets]
    assert [r.type for r in replies] == ["challenge_sent"] * 3 + ["error"]
    assert replies[3].code == "rate_limited" and 9_000 <= replies[3].retry_after_ms <= 10_000
    friend = await connect(server, "friend")
    assert (await friend.request(ChallengeRequest, to="target3", game="connect4")).type == "challenge_sent"


async def test_fresh_names_on_one_address_cannot_flood_the_tournaments(make_server):
    """An address that hosts five open tournaments under five claimed names is refused a sixth under a new name
    (`too_many`), one name is refused a fourth; a host on another address still creates one and it is listed."""
    server = await make_server()
    created = []
    for n in range(6):
        host = await connect(server, f"host{n}", ATTACKER, key=key())
        created.append(
            await host.request(CreateTournament, game="connect4", kind="round_robin", players=AI_ONLY, start_in_s=3600)
        )
    assert [r.type for r in created] == ["tournament"] * 5 + ["error"]
    assert created[5].code == "too_many" and "address" in created[5].message
    honest = await connect(server, "honest", key=key())
    mine = [
        await honest.request(CreateTournament, game="connect4", kind="round_robin", players=AI_ONLY, start_in_s=3600)
        for _ in range(4)
    ]
    assert [r.type for r in mine] == ["tournament"] * 3 + ["error"] and mine[3].code == "too_many"
    listed = await honest.request(ListTournaments)
    assert {r.tournament for r in mine[:3]} <= {t["tournament"] for t in listed.tournaments}


async def test_a_tournament_forgets_its_watchers_when_they_are_gone(make_server):
    """A person who looked at a tournament and left holds no memory in it: once their session is forgotten (after
    the grace in which it may resume), the watcher set drops it."""
    server = await make_server()
    host = await connect(server, "host", key=key())
    made = await host.request(CreateTournament, game="connect4", kind="round_robin", players=AI_ONLY, start_in_s=600)
    visitors = [await connect(server, f"visitor{n}") for n in range(5)]
    for visitor in visitors:
        assert (await visitor.request(GetTournament, tournament=made.tournament)).type == "tournament"
    watchers = server.lobby.tournaments.watchers[made.tournament]
    assert len(watchers) == 6
    for visitor in visitors:
        await visitor.close()
    sessions = [visitor.welcome.session for visitor in visitors]

    async def offline() -> bool:
        return not any(server.lobby.clients[s].connected for s in sessions)

    await eventually(offline, "the server to see the visitors go")
    assert len(watchers) == 6  # each may still resume within the grace
    server.lobby.sweep(asyncio.get_running_loop().time() + SESSION_GRACE_S + 1)
    assert len(watchers) == 1
    await host.close()
