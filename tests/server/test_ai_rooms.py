"""AI seats in real rooms: they play whole games off the event loop, stand in for dropped players, and fall back."""

from __future__ import annotations

import asyncio
import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from gamenight.protocol.messages import AddAi, CreateRoom, Join, MakeMove, Rematch
from gamenight.server.games import REGISTRY
from tests.peer import Peer, seat_pair

FAST = {"ai_ms": 60, "ai_pace_ms": 0}


def _no_search_here(*args, **kwargs):
    """Stands in for the AI in the server's own process: being called means search ran on the event loop."""
    raise AssertionError("AI search ran in the server process")


async def _play_human(peer: Peer, code: str, seat: int, rng: random.Random):
    """Answer every turn of `seat` with a random legal move until the game ends; returns the final state."""
    while True:
        state = await peer.wait(lambda m: m.type == "state")
        if state.status == "finished":
            return state
        if state.to_move == [seat]:
            await peer.send(MakeMove(room=code, move=rng.choice(state.legal), seq=state.seq))


async def test_ai_plays_a_whole_game_while_another_room_flows(peers, monkeypatch):
    """An AI seat plays a full game over websockets in worker processes; another room keeps playing meanwhile."""
    monkeypatch.setattr("gamenight.server.ai.play.choose_move", _no_search_here)
    host: Peer = await peers("host")
    room = await host.request(CreateRoom, game="othello", options={"size": 6, **FAST})
    await host.request(Join, room=room.room, seat=0)
    added = await host.request(AddAi, room=room.room, level=5)
    assert added.type != "error"
    ai_game = asyncio.create_task(_play_human(host, room.room, 0, random.Random(1)))

    alice: Peer = await peers("alice")
    bob: Peer = await peers("bob")
    other_code, state = await seat_pair(alice, bob)
    rng = random.Random(2)
    for _ in range(12):
        mover = (alice, bob)[state.to_move[0]]
        legal = (await mover.at(other_code, state.seq)).legal
        await mover.send(MakeMove(room=other_code, move=rng.choice(legal), seq=state.seq))
        state = await alice.expect("state", seq=state.seq + 1)
    assert not ai_game.done(), "the other room should have kept moving while the AI game was still on"
    final = await asyncio.wait_for(ai_game, 60)
    assert final.result is not None
    ai_moves = [m for m in host.seen if m.type == "moved" and m.seat == 1]
    searched = [m for m in ai_moves if {"depth", "nodes", "score"} <= set(m.ai or {})]
    # (a worker held up past its budget and grace by a loaded machine answers with a marked fallback move)
    assert searched and all(m in searched or (m.ai or {}).get("fallback") for m in ai_moves)


async def test_all_ai_room_plays_itself_for_a_spectator(peers):
    """A room with two AIs plays on its own and a spectator sees it to the end; the host can ask for a rematch."""
    host: Peer = await peers("host")
    room = await host.request(CreateRoom, game="othello", options={"size": 6, **FAST})
    await host.request(AddAi, room=room.room, level=1)
    await host.request(AddAi, room=room.room, bot="classic")
    await host.request(Join, room=room.room, role="spectator")
    over = await host.expect("event", kind="game_over")
    assert "reason" in over.data
    await host.send(Rematch(room=room.room))
    again = await host.wait(lambda m: m.type == "state" and m.status == "playing" and m.seq > over.seq)
    assert again.moves == []


async def test_ai_stands_in_for_a_dropped_player(peers, url):
    """Under `on_disconnect: ai`, an AI moves for a dropped player, and the seat returns to them on resume."""
    alice: Peer = await peers("alice")
    bob: Peer = await peers("bob")
    room = await alice.request(CreateRoom, game="othello", options={"on_disconnect": "ai", "ai_level": 1, **FAST})
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    state = await bob.expect("state")
    token = alice.welcome.token
    await alice.close()
    played = await bob.wait(lambda m: m.type == "moved" and m.seat == 0)
    assert played.ai is not None
    stood_in = await bob.wait(lambda m: m.type == "room" and m.seats[0].stand_in)
    assert stood_in.seats[0].name == "alice"
    back = await Peer.connect(url, "alice", resume=token)
    await back.expect("joined", room=room.room)
    returned = await bob.wait(lambda m: m.type == "room" and m.seats[0].connected and not m.seats[0].stand_in)
    assert returned.seats[0].name == "alice"
    latest = await back.expect("state")
    assert latest.seq > state.seq
    await back.close()


async def test_a_failing_ai_falls_back_and_the_game_goes_on(peers, game_server, monkeypatch):
    """When the AI worker fails, the room plays a quick fallback move for the seat instead of stalling."""

    def broken(turn):
        raise RuntimeError("worker died")

    monkeypatch.setattr("gamenight.server.app._run_ai", broken)
    monkeypatch.setattr(game_server, "_pool", ThreadPoolExecutor(1))
    host: Peer = await peers("host")
    room = await host.request(CreateRoom, game="othello", options=FAST)
    await host.request(Join, room=room.room, seat=1)
    await host.request(AddAi, room=room.room, level=3)
    moved = await host.wait(lambda m: m.type == "moved" and m.seat == 0)
    assert moved.ai == {"fallback": True}
    state = await host.wait(lambda m: m.type == "state" and m.to_move == [1])
    assert len(state.moves) == 1


@pytest.mark.parametrize(
    ("request_fields", "code"),
    [
        ({"level": 9}, "bad_options"),
        ({"bot": "deep-blue"}, "bad_options"),
        ({"bot": "chaser"}, "bad_options"),
        ({}, "bad_options"),
        ({"level": 2, "bot": "classic"}, "bad_options"),
    ],
)
async def test_add_ai_checks_its_arguments(peers, request_fields, code):
    """Bad AI levels, unknown bots, bots of another game, and neither/both are refused with `bad_options`."""
    host: Peer = await peers("host")
    room = await host.request(CreateRoom, game="othello", options={})
    reply = await host.request(AddAi, room=room.room, **request_fields)
    assert reply.type == "error" and reply.code == code


async def test_only_the_host_adds_ai(peers):
    """Another player cannot seat an AI in someone else's room."""
    host: Peer = await peers("host")
    guest: Peer = await peers("guest")
    room = await host.request(CreateRoom, game="othello", options={})
    reply = await guest.request(AddAi, room=room.room, level=3)
    assert reply.type == "error" and reply.code == "not_allowed"


async def test_welcome_lists_bots_per_game(peers):
    """`welcome.games` names the classic bots each game offers."""
    peer: Peer = await peers()
    bots = {g.name: set(g.bots) for g in peer.welcome.games}
    assert {"classic", "quantum"} <= bots["othello"] and "playout" in bots["pentago"]


async def test_ai_rides_tron_live(peers):
    """Two AIs ride a live Tron game on the tick clock until one (or both) crash, watched by a spectator."""
    host: Peer = await peers("host")
    options = {"map": "duel-small", "tick_ms": 100, "countdown_ms": 0}
    room = await host.request(CreateRoom, game="tron", options=options)
    await host.request(Join, room=room.room, role="spectator")
    await host.request(AddAi, room=room.room, level=2)
    await host.request(AddAi, room=room.room, bot="chaser")
    over = await host.expect("event", kind="game_over")
    assert over.data["reason"] == "crash"
    ticks = [m.view["tick"] for m in host.seen if m.type == "tick"]
    assert ticks == list(range(1, len(ticks) + 1)) and len(ticks) >= 3


@pytest.mark.parametrize("game", sorted(name for name, entry in REGISTRY.items() if not entry.rules.simultaneous))
async def test_every_registered_game_plays_to_its_end_against_the_ai(peers, game):
    """Each game the registry lists is played over websockets: a person against its AI to a result whose
    reason the game itself describes in `welcome` (a game is its files and one registration)."""
    host: Peer = await peers("host")
    (description,) = [g for g in host.welcome.games if g.name == game]
    room = await host.request(CreateRoom, game=game, options=FAST)
    await host.request(Join, room=room.room, seat=0)
    await host.request(AddAi, room=room.room, level=1)
    final = await asyncio.wait_for(_play_human(host, room.room, 0, random.Random(game)), 60)
    assert final.result is not None and description.reason(final.result.reason) is not None
