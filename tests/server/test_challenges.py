"""Presence and challenges: who is online, challenging a player (or inviting them to a seat), and every way it ends."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from gamenight.protocol import PROTOCOL_VERSION
from gamenight.protocol.messages import (
    Accept,
    ChallengeRequest,
    CreateRoom,
    Decline,
    Hello,
    Invite,
    Join,
    ListPlayers,
    LobbyWatch,
    MakeMove,
    Resign,
)
from gamenight.server.admission import LobbyLimits
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.lobby import Lobby
from tests.peer import Peer
from tests.server.test_identity import refused_hello

KEY = "bot-key-" + "x" * 20


async def bot(peers, name: str = "rhino", games: tuple[str, ...] = ("othello",)) -> Peer:
    """A connected bot that takes challenges for `games`."""
    peer: Peer = await peers(name, key=KEY + name, bot=True, accepts=list(games))
    return peer


async def test_presence_lists_bots_first_and_pushes_arrivals_and_departures(peers):
    """list_players shows who is online (bots first, with their games); lobby watchers hear who comes and goes."""
    watcher: Peer = await peers("zoe")
    await watcher.request(LobbyWatch, on=True)
    rhino = await bot(peers)
    arrived = await watcher.player("rhino")
    assert arrived.online and arrived.bot and arrived.claimed and arrived.games == ("othello",)
    await peers("amy")
    await watcher.player("amy", online=True)
    listed = await watcher.request(ListPlayers)
    assert [(p.name, p.bot, p.games) for p in listed.players] == [
        ("rhino", True, ("othello",)),
        ("amy", False, ()),
        ("zoe", False, ()),
    ]
    await rhino.close()
    await watcher.player("rhino", online=False)
    assert [p.name for p in (await watcher.request(ListPlayers)).players] == ["amy", "zoe"]


async def test_a_burst_of_arrivals_and_departures_reaches_a_watcher_in_a_few_frames(game_server, url):
    """200 people connecting (190 of them leaving again) in a burst reach a lobby watcher as one `lobby` frame per
    push interval at most, not a frame per change, and the watcher's view of who is online ends right."""
    watcher = await Peer.connect(url, "zoe")
    await watcher.request(LobbyWatch, on=True)
    watcher.frames.clear()
    started = time.monotonic()

    async def visit(n: int) -> Peer:
        peer = await Peer.connect(url, f"guest{n}")
        if n >= 10:
            await peer.close()
        return peer

    stayed: list[Peer] = []
    for first in range(0, 200, 20):
        stayed += (await asyncio.gather(*(visit(n) for n in range(first, first + 20))))[: max(0, 10 - first)]
    for n in range(200):
        await watcher.player(f"guest{n}", online=n < 10)
    elapsed = time.monotonic() - started
    pushed = [m for m in watcher.frames if m.type != "players"]
    assert len(pushed) <= elapsed / game_server.config.lobby_batch_s + 2, (len(pushed), elapsed)
    listed = await watcher.request(ListPlayers)
    assert sorted(p.name for p in listed.players) == sorted([f"guest{n}" for n in range(10)] + ["zoe"])
    for peer in (watcher, *stayed):
        await peer.close()


async def test_a_player_in_a_room_gets_no_presence_pushes(peers):
    """Only people browsing the lobby (in no room) are told about arrivals; players in a room ask list_players."""
    busy: Peer = await peers("busy")
    room = await busy.request(CreateRoom, game="othello", options={})
    await busy.request(Join, room=room.room, seat=0)
    await bot(peers)
    listed = await busy.request(ListPlayers)
    assert "rhino" in [p.name for p in listed.players]
    assert not [m for m in busy.inbox + busy.seen if m.type == "lobby" and m.players]


async def test_lobby_watchers_see_players_become_busy_and_free_again(peers):
    """A lobby watcher is told when a player's game starts (playing 1) and when it ends (playing 0)."""
    watcher: Peer = await peers("zoe")
    await watcher.request(LobbyWatch, on=True)
    alice: Peer = await peers("alice")
    bob: Peer = await peers("bob")
    room = await alice.request(CreateRoom, game="othello", options={})
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    assert (await watcher.player("alice", playing=1)).online
    await watcher.player("bob", playing=1)
    await alice.send(Resign(room=room.room))
    await watcher.player("alice", playing=0)
    await watcher.player("bob", playing=0)


async def test_accepted_challenge_seats_both_and_the_game_is_played(peers):
    """A challenge the bot accepts makes a room with both seated, the challenger in its seat, and moves flow."""
    rhino = await bot(peers)
    human: Peer = await peers("alice")
    sent = await human.request(ChallengeRequest, to="RHINO", game="othello", options={}, seat=1)
    assert sent.type == "challenge_sent" and sent.to == "rhino"
    offer = await rhino.expect("challenged", challenge=sent.challenge)
    assert offer.sender.name == "alice" and not offer.sender.bot and offer.game == "othello" and offer.seat == 0
    joined = await rhino.request(Accept, challenge=offer.challenge)
    assert joined.type == "joined" and joined.seat == 0
    gone = await human.expect("challenge_gone", challenge=sent.challenge)
    assert gone.why == "accepted" and gone.room == joined.room
    assert (await human.expect("joined", room=joined.room)).seat == 1
    state = await rhino.expect("state", room=joined.room)
    assert state.status == "playing" and state.to_move == [0]
    await rhino.send(MakeMove(room=joined.room, move=state.legal[0], seq=state.seq))
    moved = await human.expect("moved", room=joined.room)
    assert moved.seat == 0 and moved.legal, "the human moves next, so its copy has its legal moves"
    listed = await human.request(ListPlayers)
    assert {p.name: p.playing for p in listed.players} == {"rhino": 1, "alice": 1}


async def test_bot_challenger_is_shown_as_a_bot(peers):
    """A challenge's `from` says whether the challenger is a bot."""
    rhino = await bot(peers)
    other = await bot(peers, "edax")
    sent = await other.request(ChallengeRequest, to="rhino", game="othello")
    offer = await rhino.expect("challenged", challenge=sent.challenge)
    assert offer.sender.name == "edax" and offer.sender.bot and offer.seat == 1


async def test_declined_challenge_tells_the_challenger_why(peers):
    """A decline ends the challenge; the challenger gets challenge_gone declined with the reason."""
    rhino = await bot(peers)
    human: Peer = await peers("alice")
    sent = await human.request(ChallengeRequest, to="rhino", game="othello")
    offer = await rhino.expect("challenged")
    reply = await rhino.request(Decline, challenge=offer.challenge, reason="busy\x07 right now")
    assert reply.type == "challenge_gone" and reply.why == "declined"
    gone = await human.expect("challenge_gone", challenge=sent.challenge)
    assert gone.why == "declined" and gone.reason == "busy right now"
    again = await rhino.request(Accept, challenge=offer.challenge)
    assert again.type == "error" and again.code == "unknown_challenge"


async def test_challenger_withdraws_with_decline(peers):
    """The challenger declining its own challenge withdraws it; the target is told it is gone."""
    rhino = await bot(peers)
    human: Peer = await peers("alice")
    sent = await human.request(ChallengeRequest, to="rhino", game="othello")
    await rhino.expect("challenged")
    assert (await human.request(Decline, challenge=sent.challenge)).why == "withdrawn"
    assert (await rhino.expect("challenge_gone", challenge=sent.challenge)).why == "withdrawn"


async def test_challenger_leaving_ends_the_challenge_for_the_target(peers):
    """When the challenger's connection closes, the target is told the challenge is gone (left)."""
    rhino = await bot(peers)
    human: Peer = await peers("alice")
    sent = await human.request(ChallengeRequest, to="rhino", game="othello")
    await rhino.expect("challenged")
    await human.close()
    gone = await rhino.expect("challenge_gone", challenge=sent.challenge)
    assert gone.why == "left"
    assert (await rhino.request(Accept, challenge=sent.challenge)).code == "unknown_challenge"


async def test_target_leaving_ends_the_challenge_for_the_challenger(peers):
    """When the target's connection closes, the challenger is told the challenge is gone (left)."""
    rhino = await bot(peers)
    human: Peer = await peers("alice")
    sent = await human.request(ChallengeRequest, to="rhino", game="othello")
    await rhino.expect("challenged")
    await rhino.close()
    assert (await human.expect("challenge_gone", challenge=sent.challenge)).why == "left"


@pytest.fixture
async def quick_server() -> AsyncIterator[GameServer]:
    """A server whose challenges expire after a fifth of a second."""
    server = GameServer(ServerConfig(host="127.0.0.1", port=0, ai_workers=1, lobby_limits=LobbyLimits(challenge_s=0.2)))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_unanswered_challenge_expires_for_both_sides(quick_server):
    """A challenge nobody answers in time is gone: both sides get challenge_gone expired, and accept is refused."""
    url = f"ws://127.0.0.1:{quick_server.port}"
    rhino = await Peer.connect(url, "rhino", key=KEY, bot=True, accepts=["othello"])
    human = await Peer.connect(url, "alice")
    try:
        sent = await human.request(ChallengeRequest, to="rhino", game="othello")
        assert sent.expires_ms == 200
        assert (await human.expect("challenge_gone", challenge=sent.challenge)).why == "expired"
        assert (await rhino.expect("challenge_gone", challenge=sent.challenge)).why == "expired"
        assert (await rhino.request(Accept, challenge=sent.challenge)).code == "unknown_challenge"
    finally:
        await rhino.close()
        await human.close()


def test_sweep_expires_a_challenge_after_sixty_seconds():
    """The lobby's sweep ends a challenge 60 s after it was made, not before (driven with a fake clock)."""
    lobby = Lobby()
    target, _ = lobby.hello(Hello(protocol=PROTOCOL_VERSION, name="rhino", bot=True, accepts=["othello"]), 0.0)
    sender, _ = lobby.hello(Hello(protocol=PROTOCOL_VERSION, name="alice"), 0.0)
    out = lobby.handle(sender.session, ChallengeRequest(to="rhino", game="othello", id=1), 10.0)
    sent = next(s.message for s in out.sends if s.message.type == "challenge_sent")
    assert not lobby.sweep(69.9).sends and sent.challenge in lobby.challenges.pending
    ended = [s for s in lobby.sweep(70.0).sends if s.message.type == "challenge_gone"]
    assert ended and all(s.message.why == "expired" for s in ended) and not lobby.challenges.pending
    assert {session for s in ended for session in s.to} == {sender.session, target.session}


async def test_fourth_pending_challenge_is_refused(peers):
    """At most 3 challenges wait for an answer per challenger; the 4th is refused with too_many."""
    for name in ("b1", "b2", "b3", "b4"):
        await bot(peers, name)
    human: Peer = await peers("alice")
    for name in ("b1", "b2", "b3"):
        assert (await human.request(ChallengeRequest, to=name, game="othello")).type == "challenge_sent"
    refused = await human.request(ChallengeRequest, to="b4", game="othello")
    assert refused.type == "error" and refused.code == "too_many"


async def test_refused_challenges_reach_nobody(peers):
    """Self-challenge, an unknown player, bad options and a game the target does not take are refused up front."""
    rhino = await bot(peers)
    human: Peer = await peers("alice")
    cases = [
        (rhino, {"to": "rhino", "game": "othello"}, "not_allowed"),  # yourself
        (human, {"to": "nobody", "game": "othello"}, "unknown_player"),
        (rhino, {"to": "alice", "game": "othello"}, "not_allowed"),  # a human who accepts nothing
        (human, {"to": "rhino", "game": "chess"}, "bad_options"),
        (human, {"to": "rhino", "game": "othello", "options": {"size": 99}}, "bad_options"),
        (human, {"to": "rhino", "game": "othello", "seat": 2}, "bad_options"),
        (human, {"to": "rhino", "game": "tron"}, "not_allowed"),  # rhino plays only othello
    ]
    for sender, fields, code in cases:
        reply = await sender.request(ChallengeRequest, **fields)
        assert reply.type == "error" and reply.code == code, (fields, reply)
    assert not [m for m in rhino.seen + human.seen if m.type == "challenged"]


async def test_guest_is_challenged_only_under_its_exact_name(peers):
    """A guest bot is found by its exact name, not by a look-alike spelling."""
    guest: Peer = await peers("Kitty", bot=True, accepts=["othello"])
    human: Peer = await peers("alice")
    assert (await human.request(ChallengeRequest, to="kitty", game="othello")).code == "unknown_player"
    sent = await human.request(ChallengeRequest, to="Kitty", game="othello")
    assert (await guest.expect("challenged")).challenge == sent.challenge


async def test_hello_with_an_unknown_accepted_game_is_refused(url):
    """`accepts` naming a game this server lacks is refused at hello with bad_options."""
    assert (await refused_hello(url, "rhino", accepts=["chess"])).code == "bad_options"


async def test_invite_seats_the_target_in_an_existing_room(peers):
    """The host offers an open seat of its room; the invited bot accepts and the game starts."""
    rhino = await bot(peers)
    host: Peer = await peers("alice")
    room = await host.request(CreateRoom, game="othello", options={})
    await host.request(Join, room=room.room, seat=1)
    sent = await host.request(Invite, room=room.room, seat=0, to="rhino")
    assert sent.type == "challenge_sent"
    offer = await rhino.expect("challenged", challenge=sent.challenge)
    assert offer.room == room.room and offer.seat == 0 and offer.game == "othello"
    joined = await rhino.request(Accept, challenge=offer.challenge)
    assert joined.type == "joined" and joined.room == room.room and joined.seat == 0
    assert (await host.expect("challenge_gone", challenge=sent.challenge)).room == room.room
    assert (await host.expect("state", room=room.room)).status == "playing"


async def test_only_the_host_invites_to_an_open_seat(peers):
    """Invites by someone not hosting, or for a taken seat, are refused."""
    await bot(peers)
    host: Peer = await peers("alice")
    other: Peer = await peers("bob")
    room = await host.request(CreateRoom, game="othello", options={})
    await host.request(Join, room=room.room, seat=1)
    assert (await other.request(Invite, room=room.room, seat=0, to="rhino")).code == "not_allowed"
    assert (await host.request(Invite, room=room.room, seat=1, to="rhino")).code == "seat_taken"


def test_accept_whose_room_cannot_open_ends_the_challenge_for_both():
    """An accept refused because the challenger may host no more rooms ends the challenge at once: the accepter's
    reply and the challenger both get the error, both get challenge_gone with the reason, and nothing stays pending."""
    lobby = Lobby(limits=LobbyLimits(rooms_per_player=1))
    target, _ = lobby.hello(Hello(protocol=PROTOCOL_VERSION, name="rhino", bot=True, accepts=["othello"]), 0.0)
    sender, _ = lobby.hello(Hello(protocol=PROTOCOL_VERSION, name="alice"), 0.0)
    lobby.handle(sender.session, CreateRoom(game="othello", id=1), 1.0)  # alice hosts her one room
    out = lobby.handle(sender.session, ChallengeRequest(to="rhino", game="othello", id=2), 2.0)
    sent = next(s.message for s in out.sends if s.message.type == "challenge_sent")
    out = lobby.handle(target.session, Accept(challenge=sent.challenge, id=7), 3.0)
    errors = {session: s.message for s in out.sends if s.message.type == "error" for session in s.to}
    assert errors[target.session].code == "too_many" and errors[target.session].id == 7
    assert errors[sender.session].code == "too_many"
    gone = [s for s in out.sends if s.message.type == "challenge_gone"]
    assert {session for s in gone for session in s.to} == {sender.session, target.session}
    assert all(s.message.why == "declined" and "could not start" in s.message.reason for s in gone)
    assert not lobby.challenges.pending and len(lobby.rooms) == 1
    again = lobby.handle(target.session, Accept(challenge=sent.challenge, id=8), 4.0)
    assert [s.message.code for s in again.sends] == ["unknown_challenge"]
