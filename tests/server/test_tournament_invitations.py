"""Nobody is seated by someone else: a tournament invites the people its host names, and only those who accept
play; a rated challenge to a guest is refused before it can leave a room behind."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from gamenight.protocol.messages import (
    Accept,
    ChallengeRequest,
    CreateRoom,
    CreateTournament,
    Decline,
    GetTournament,
    JoinTournament,
    ListPlayers,
    ListTournaments,
    Profile,
)
from gamenight.server.app import GameServer, ServerConfig
from tests.peer import Peer
from tests.server.serverproc import ServerProcess
from tests.server.test_ratings_tournaments import autoplay, key, until
from tests.waiting import eventually

QUICK_INVITATION_S = 1.0  # the attack's invitation runs out while the test watches
FAST_CONNECT4 = {"ai_pace_ms": 0}


@pytest.fixture
def make_server(server_with, tmp_path: Path) -> Callable[[float], Awaitable[GameServer]]:
    """Starts in-process servers on a real SQLite file whose tournament invitations last `invitation_s`
    (conftest's `server_with`)."""
    config = ServerConfig(port=0, ai_workers=1, db=str(tmp_path / "games.db"))

    def make(invitation_s: float = 60.0) -> Awaitable[GameServer]:
        return server_with(config, invitation_s=invitation_s)

    return make


async def person(server: GameServer, name: str, games: tuple[str, ...] = ("connect4",)) -> Peer:
    """A claimed player online who takes challenges for `games` (as the terminal client says hello)."""
    return await Peer.connect(f"ws://127.0.0.1:{server.port}", name, key=key(), accepts=list(games))


async def seated(peer: Peer) -> list[str]:
    """The rooms `peer` was seated in without asking (a `joined` with no request id), up to now: a request's reply
    comes after everything the server sent before it."""
    await peer.request(ListPlayers)
    return [m.room for m in peer.seen if m.type == "joined" and m.id is None]


async def test_a_forced_tournament_only_invites_and_costs_the_victim_nothing(make_server):
    """The probe's attack: a rated 1 s tournament naming an idle player seats nobody; the player is invited, and
    when the invitation runs out unanswered the tournament is cancelled with no game played and no rating made."""
    server = await make_server(QUICK_INVITATION_S)
    victim = await person(server, "victim")
    mallory = await person(server, "mallory")
    reply = await mallory.request(
        CreateTournament,
        game="connect4",
        kind="round_robin",
        rated=True,
        players=["victim", "mallory"],
        options={"clock_s": 1},
    )
    assert reply.type == "tournament" and reply.status == "waiting", reply
    assert reply.entries == ["mallory"] and reply.invited == ["victim"] and reply.games == []
    sent = await mallory.expect("challenge_sent", to="victim")
    assert sent.tournament == reply.tournament and sent.expires_ms == 1000
    offer = await victim.expect("challenged")
    assert offer.challenge == sent.challenge and offer.sender.name == "mallory" and offer.game == "connect4"
    assert offer.options["rated"] is True and offer.options["clock_s"] == 1
    assert offer.tournament.tournament == reply.tournament and offer.tournament.kind == "round_robin"
    assert offer.tournament.entries == ("mallory",) and offer.tournament.invited == ("victim",)
    assert (await victim.expect("challenge_gone", challenge=sent.challenge)).why == "expired"
    assert (await mallory.expect("challenge_gone", challenge=sent.challenge)).why == "expired"
    final = await until(mallory, reply.tournament, lambda m: m.status == "cancelled")
    assert final.games == [] and final.entries == ["mallory"] and final.invited == [] and final.dropped == ["victim"]
    late = await victim.request(Accept, challenge=sent.challenge)
    assert late.type == "error" and late.code == "unknown_challenge"
    assert await seated(victim) == []
    for name in ("victim", "mallory"):
        card = await victim.request(Profile, name=name)
        assert card.type == "error" and card.code == "unknown_player", card  # no rated game was played
    again = await mallory.request(GetTournament, tournament=reply.tournament)
    assert again.status == "cancelled" and again.games == []


async def test_an_accepted_invitation_enters_the_player_and_the_tournament_plays(make_server):
    """The invited player accepts: the reply is the tournament with them entered, the host hears it was accepted,
    and the server then seats them in its games (each `joined` naming the tournament) until it finishes."""
    server = await make_server()
    host = await person(server, "host")
    bob = await person(server, "bob")
    reply = await host.request(
        CreateTournament, game="connect4", kind="round_robin", options=FAST_CONNECT4, players=["bob", "AI level 1"]
    )
    assert reply.status == "waiting" and reply.entries == ["AI level 1"] and reply.invited == ["bob"]
    offer = await bob.expect("challenged")
    assert await seated(bob) == []
    accepted = await bob.request(Accept, challenge=offer.challenge)
    assert accepted.type == "tournament" and accepted.tournament == reply.tournament
    assert accepted.entries == ["AI level 1", "bob"] and accepted.invited == []
    gone = await host.expect("challenge_gone", challenge=offer.challenge)
    assert gone.why == "accepted" and gone.tournament == reply.tournament
    joined = await bob.wait(lambda m: m.type == "joined" and m.id is None)
    assert joined.tournament == reply.tournament
    final = await autoplay(bob, reply.tournament)
    assert sorted(g["players"] for g in final.games) == [["AI level 1", "bob"], ["bob", "AI level 1"]]
    assert all(g["places"] is not None and not g["forfeit"] for g in final.games)


async def test_a_declined_invitation_drops_that_player_and_the_rest_play(make_server):
    """One invited player declines (the host gets the reason), another accepts: it starts with the host's AI and
    the one who accepted, and the one who declined is never seated. Joining answers an invitation too."""
    server = await make_server()
    host = await person(server, "host")
    bob = await person(server, "bob")
    carol = await person(server, "carol")
    reply = await host.request(
        CreateTournament,
        game="connect4",
        kind="round_robin",
        options=FAST_CONNECT4,
        players=["bob", "carol", "AI level 1"],
    )
    assert reply.invited == ["bob", "carol"]
    to_bob = await bob.expect("challenged")
    to_carol = await carol.expect("challenged")
    declined = await bob.request(Decline, challenge=to_bob.challenge, reason="not tonight")
    assert declined.type == "challenge_gone" and declined.why == "declined"
    told = await host.expect("challenge_gone", challenge=to_bob.challenge)
    assert told.why == "declined" and told.reason == "not tonight"
    entered = await carol.request(JoinTournament, tournament=reply.tournament)  # joining accepts the invitation
    assert entered.type == "tournament" and entered.entries == ["AI level 1", "carol"] and entered.dropped == ["bob"]
    assert (await host.expect("challenge_gone", challenge=to_carol.challenge)).why == "accepted"
    running = await until(host, reply.tournament, lambda m: m.status == "running")
    assert {p for g in running.games for p in g["players"]} == {"AI level 1", "carol"}
    assert (await carol.wait(lambda m: m.type == "joined" and m.id is None)).tournament == reply.tournament
    assert await seated(bob) == [] and not [m for m in bob.seen if m.type == "tournament"]


async def test_inviting_needs_the_player_online_and_taking_the_game(make_server):
    """Only people online who take challenges for the game can be invited; nothing is kept for a refused one."""
    server = await make_server()
    host = await person(server, "host")
    quiet = await person(server, "quiet", games=())
    gone = await person(server, "gone")
    await gone.close()

    async def offline() -> bool:
        return "gone" not in [p.name for p in (await host.request(ListPlayers)).players]

    await eventually(offline, "gone's disconnect handled")
    for name, code in (("quiet", "not_allowed"), ("gone", "unknown_player")):
        reply = await host.request(CreateTournament, game="connect4", kind="round_robin", players=["host", name])
        assert reply.type == "error" and reply.code == code, (name, reply)
    assert not [m for m in quiet.seen if m.type == "challenged"]
    assert (await host.request(ListTournaments)).tournaments == []


async def test_invitations_pending_at_a_restart_are_dropped(server_process: Callable[..., ServerProcess]):
    """A server killed while an invitation waits: after the restart nobody can answer it, so that player is dropped
    and the tournament (host and that player) is cancelled, never started."""
    first = server_process()
    host_key = key()
    host = await Peer.connect(first.url, "host", key=host_key)
    bob = await Peer.connect(first.url, "bob", key=key(), accepts=["connect4"])
    reply = await host.request(CreateTournament, game="connect4", kind="round_robin", players=["host", "bob"])
    assert reply.status == "waiting" and reply.invited == ["bob"]
    await bob.expect("challenged")
    first.kill()
    await host.close()
    await bob.close()
    second = server_process()
    host = await Peer.connect(second.url, "host", key=host_key)
    again = await host.request(GetTournament, tournament=reply.tournament)
    if again.status == "waiting":  # its first sweep is a moment away
        again = await until(host, reply.tournament, lambda m: m.status != "waiting")
    final = again
    assert final.status == "cancelled" and final.dropped == ["bob"] and final.games == []
    await host.close()


async def test_a_rated_challenge_to_a_guest_is_refused_and_leaves_no_room(make_server):
    """A guest could not sit in a rated game: the challenge is refused before it reaches them, so no room is left
    open with the challenger seated (the probe used 20 of those to fill the challenger's hosting cap)."""
    server = await make_server()
    url = f"ws://127.0.0.1:{server.port}"
    alice = await Peer.connect(url, "alice", key=key())
    guest = await Peer.connect(url, "guest", accepts=["othello"])
    for _ in range(3):
        reply = await alice.request(ChallengeRequest, to="guest", game="othello", options={"rated": True})
        assert reply.type == "error" and reply.code == "not_allowed" and "guest" in reply.message, reply
    assert not [m for m in guest.seen if m.type == "challenged"]
    assert not server.lobby.rooms
    unrated = await alice.request(ChallengeRequest, to="guest", game="othello")
    assert unrated.type == "challenge_sent"
    room = await alice.request(CreateRoom, game="othello")
    assert room.type == "room"
    await alice.close()
    await guest.close()
