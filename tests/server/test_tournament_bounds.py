"""Tournaments of AIs alone are bounded and watchable, and a host can call a tournament off (issue 37)."""

from __future__ import annotations

from gamenight.protocol.messages import CancelTournament, CreateTournament
from gamenight.server import tournament_host
from tests.peer import Peer
from tests.server.test_ratings_tournaments import key, until

AIS = ["AI level 1", "AI level 2", "AI level 3"]
FAST = {"ai_ms": 50, "ai_pace_ms": 0}


async def host(server) -> Peer:
    """A claimed player on `server`, taking challenges for Connect Four."""
    return await Peer.connect(f"ws://127.0.0.1:{server.port}", "host", key=key(), accepts=["connect4"])


async def test_an_arena_of_ais_alone_is_capped_in_time_and_games(server_with, monkeypatch):
    """An arena with no person or bot may last at most AI_ARENA_S (bad_options past it, one request could keep an
    AI worker busy for 6 hours) and ends once it has played AI_ARENA_GAMES games, before its clock runs out."""
    monkeypatch.setattr(tournament_host, "AI_ARENA_GAMES", 4)
    server = await server_with()
    alice = await host(server)
    long = await alice.request(
        CreateTournament, game="connect4", kind="arena", players=AIS[:2], duration_s=tournament_host.AI_ARENA_S + 1
    )
    assert long.type == "error" and long.code == "bad_options"
    made = await alice.request(
        CreateTournament, game="connect4", kind="arena", players=AIS, duration_s=600, options=FAST
    )
    assert made.type == "tournament", made
    final = await until(alice, made.tournament, lambda m: m.status == "finished")
    assert len(final.games) == 4 and all(g["places"] is not None for g in final.games)
    assert final.ends_in_ms is not None and final.ends_in_ms > 300_000  # ended by its game cap, not its clock
    await alice.close()


async def test_a_tournaments_ai_games_keep_the_rooms_pace_with_nobody_watching(server_with):
    """An AI-only tournament's games move at the room's AI pace (500 ms by default) though nobody sits in their
    rooms: people follow them from the tournament's page (they used to run at full speed, over in a second)."""
    server = await server_with()
    alice = await host(server)
    made = await alice.request(CreateTournament, game="connect4", kind="round_robin", players=AIS[:2])
    assert made.status == "running", made  # started at once: its first game is in the reply
    room = server.lobby.rooms[next(g["room"] for g in made.games if g["room"])]
    assert room.status == "playing" and not room.occupied() and room.ai_pace_ms() == 500
    await alice.close()


async def test_its_host_calls_a_tournament_off(server_with):
    """The host cancels a running round robin: its invitations are withdrawn, no further game starts and the game
    being played counts for nothing; nobody else may cancel it, nor cancel it twice."""
    server = await server_with()
    alice = await host(server)
    bob = await Peer.connect(f"ws://127.0.0.1:{server.port}", "bob", key=key(), accepts=["connect4"])
    made = await alice.request(
        CreateTournament, game="connect4", kind="round_robin", players=["bob", *AIS], start_in_s=600
    )
    assert made.invited == ["bob"]
    await bob.expect("challenged")
    refused = await bob.request(CancelTournament, tournament=made.tournament)
    assert refused.type == "error" and refused.code == "not_allowed"
    cancelled = await alice.request(CancelTournament, tournament=made.tournament)
    assert cancelled.type == "tournament" and cancelled.status == "cancelled"
    assert cancelled.invited == [] and cancelled.dropped == ["bob"] and cancelled.games == []
    assert (await bob.expect("challenge_gone")).why == "withdrawn"
    again = await alice.request(CancelTournament, tournament=made.tournament)
    assert again.type == "error" and again.code == "not_allowed"

    running = await alice.request(CreateTournament, game="connect4", kind="round_robin", players=AIS)
    code = next(g["room"] for g in running.games if g["room"])
    stopped = await alice.request(CancelTournament, tournament=running.tournament)
    assert stopped.status == "cancelled"
    assert server.lobby.tournament_of(code) is None  # the game goes on as a game, outside the tournament
    table = server.lobby.tournaments.tournaments[running.tournament]
    assert all(g.room is None or g.room == code for g in table.games) and all(g.places is None for g in table.games)
    for peer in (alice, bob):
        await peer.close()
