"""Clocks over real websockets: flags by timer, increments, passes, moretime, takebacks, aborts and bad options.

The server runs on a manual clock (tests/manual_clock.py): time passes only when a test advances it, so every
figure below is exact and no test sleeps."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from gamenight.protocol.messages import (
    Abort,
    AddAi,
    CreateRoom,
    GetGame,
    Join,
    ListGames,
    MakeMove,
    MoreTime,
    Sync,
    Takeback,
    TakebackDecline,
)
from gamenight.server.app import GameServer, ServerConfig
from tests.manual_clock import ManualClock
from tests.peer import Peer, seat_pair

PASS_LINE = ["d3", "c3", "e6", "d2", "d1", "e1", "b2", "c1"]  # 8x8 Othello: after white's c1, black has no move


@pytest.fixture
async def clock_server(tmp_path) -> AsyncIterator[GameServer]:
    """A server on a real SQLite file and a manual clock (`server.clock.advance(s)` moves the game's time)."""
    config = ServerConfig(port=0, ai_workers=1, db=str(tmp_path / "games.db"), lag_probe_s=0.2)
    server = GameServer(config, clock=ManualClock())
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def pair(clock_server: GameServer) -> AsyncIterator[tuple[Peer, Peer]]:
    """Two connected players on the clock server."""
    url = f"ws://127.0.0.1:{clock_server.port}"
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    try:
        yield alice, bob
    finally:
        await alice.close()
        await bob.close()


async def _next_state(peer: Peer, after: int):
    """The first state with a seq above `after`."""
    return await peer.wait(lambda m: m.type == "state" and m.seq > after)


async def _play(peers: dict[int, Peer], code: str, state, moves: list[str]):
    """Play `moves` in order, each by the seat to move; returns the state after the last one."""
    for move in moves:
        await peers[state.to_move[0]].send(MakeMove(room=code, move=move, seq=state.seq))
        state = await _next_state(peers[0], state.seq)
    return state


async def test_a_player_who_never_moves_loses_on_time_by_the_timer(clock_server, pair):
    """At clock_s 2 the silent mover loses on time when 2 s have passed, not a moment before, with no message sent;
    the replay says so."""
    alice, bob = pair
    code, first = await seat_pair(alice, bob, "othello", {"clock_s": 2})
    assert first.clock is not None and first.clock.running == 0 and first.clock.remaining_ms == (2000, 2000)
    clock_server.clock.advance(1.999)
    still = await alice.request(Sync, room=code, seq=first.seq)
    assert still.status == "playing" and still.clock.remaining_ms[0] == 1
    clock_server.clock.advance(0.001)
    final = await alice.wait(lambda m: m.type == "state" and m.status == "finished")
    assert final.clock.at_ms - first.clock.at_ms == 2000  # the flag fell exactly when the time was up
    assert final.result.reason == "time" and final.result.winner == 1 and final.result.loser == 0
    assert final.clock.running is None and final.clock.remaining_ms[0] == 0
    games = await alice.request(ListGames)
    record = await alice.request(GetGame, game_id=games.games[0]["game_id"])
    assert record.record["result"]["reason"] == "time" and record.record["result"]["winner"] == 1
    clock = {"initial_ms": 2000, "increment_ms": 0, "days_per_move": 0, "move_ms": [], "seats": []}
    assert record.record["clock"] == clock


async def test_increment_is_added_and_a_pass_costs_nothing(pair):
    """Each move adds the increment to its mover, so quick moves leave both clocks above their start."""
    alice, bob = pair
    code, state = await seat_pair(alice, bob, "othello", {"clock_s": 60, "increment_s": 5})
    peers = {0: alice, 1: bob}
    before = state.clock.remaining_ms
    state = await _play(peers, code, state, PASS_LINE[:1])
    assert 60000 < state.clock.remaining_ms[0] <= 65000 and state.clock.running == 1
    state = await _play(peers, code, state, PASS_LINE[1:])
    assert before == (60000, 60000)
    for seat in (0, 1):
        assert state.clock.remaining_ms[seat] > 60000  # every move took far less than the 5 s it earned


async def test_a_pass_costs_nothing(clock_server, pair):
    """When black has no move after c1, white keeps the move and black's clock neither runs nor changes."""
    alice, bob = pair
    code, state = await seat_pair(alice, bob, "othello", {"clock_s": 60})
    state = await _play({0: alice, 1: bob}, code, state, PASS_LINE[:-1])
    black = state.clock.remaining_ms[0]  # black just moved: its time is booked
    state = await _play({0: alice, 1: bob}, code, state, PASS_LINE[-1:])
    assert state.view["passed"] == 0 and state.to_move == [1] and state.clock.running == 1
    assert state.clock.remaining_ms[0] == black
    clock_server.clock.advance(0.3)  # white thinks; black's clock stands still
    state = await _play({0: alice, 1: bob}, code, state, [(await bob.at(code, state.seq)).legal[0]])
    assert state.clock.remaining_ms[0] == black and state.clock.running == 0


async def test_moretime_gives_the_opponent_15_seconds(pair):
    """`moretime` adds 15 s to the opponent's clock, with an event naming who gave it."""
    alice, bob = pair
    code, state = await seat_pair(alice, bob, "connect4", {"clock_s": 30})
    await alice.send(MoreTime(room=code))
    event = await bob.expect("event", kind="moretime")
    assert event.data == {"seat": 0, "to": [1], "ms": 15000}
    state = await _next_state(bob, state.seq)
    assert state.clock.remaining_ms[1] == 45000 and state.clock.remaining_ms[0] <= 30000


async def test_moretime_refused_without_a_clock_and_in_correspondence(pair):
    """`moretime` is `not_allowed` in a game without a clock and in a correspondence game."""
    alice, bob = pair
    code, _ = await seat_pair(alice, bob, "connect4", {})
    reply = await alice.request(MoreTime, room=code)
    assert reply.type == "error" and reply.code == "not_allowed"
    code, state = await seat_pair(alice, bob, "connect4", {"days_per_move": 2})
    assert state.clock.days_per_move == 2 and state.clock.remaining_ms == (2 * 86_400_000,) * 2
    reply = await alice.request(MoreTime, room=code)
    assert reply.type == "error" and reply.code == "not_allowed"


async def test_takeback_accepted_restores_board_and_clocks_exactly(clock_server, pair):
    """Accepted: the asker's move and the reply are undone; board, moves and both clocks equal the earlier state."""
    alice, bob = pair
    code, state = await seat_pair(alice, bob, "connect4", {"clock_s": 60, "increment_s": 2})
    peers = {0: alice, 1: bob}
    state = await _play(peers, code, state, ["d", "d"])
    earlier = state  # alice to move
    clock_server.clock.advance(0.2)
    state = await _play(peers, code, state, ["c"])
    clock_server.clock.advance(0.2)
    state = await _play(peers, code, state, ["e"])
    assert state.clock.remaining_ms != earlier.clock.remaining_ms  # both moves cost time (and earned 2 s)
    await alice.send(Takeback(room=code))
    offer = await bob.expect("event", kind="takeback")
    assert offer.data == {"seat": 0, "action": "offer"}
    await bob.send(Takeback(room=code))
    accepted = await alice.wait(lambda m: m.type == "event" and m.kind == "takeback" and m.data["action"] != "offer")
    assert accepted.data == {"seat": 1, "action": "accept", "to": 0, "plies": 2}
    back = await _next_state(alice, state.seq)
    assert back.view["board"] == earlier.view["board"] and back.moves == earlier.moves
    assert back.to_move == [0] and back.clock.running == 0
    assert back.clock.remaining_ms[1] == earlier.clock.remaining_ms[1]
    assert back.clock.remaining_ms[0] == earlier.clock.remaining_ms[0]  # sent at once: the clock restarts there


async def test_takeback_declined_changes_nothing(pair):
    """Declined: an event says so, no new state comes and the game goes on from where it was."""
    alice, bob = pair
    code, state = await seat_pair(alice, bob, "connect4", {"clock_s": 60})
    state = await _play({0: alice, 1: bob}, code, state, ["d"])
    await alice.send(Takeback(room=code))
    await bob.expect("event", kind="takeback")
    await bob.send(TakebackDecline(room=code))
    declined = await alice.wait(lambda m: m.type == "event" and m.kind == "takeback" and m.data["action"] != "offer")
    assert declined.data == {"seat": 1, "action": "decline"}
    reply = await bob.request(TakebackDecline, room=code)  # nothing left to decline
    assert reply.type == "error" and reply.code == "not_allowed"
    state = await _play({0: alice, 1: bob}, code, state, ["e"])
    assert state.moves == ["d", "e"]


async def test_takeback_against_the_ai_is_accepted_at_once(clock_server, pair):
    """An AI opponent accepts a takeback: the human is to move again in the position before their move."""
    alice, _ = pair
    room = await alice.request(CreateRoom, game="connect4", options={"ai_pace_ms": 0, "ai_ms": 50, "clock_s": 60})
    await alice.request(AddAi, room=room.room, seat=1, level=1)
    await alice.request(Join, room=room.room, seat=0)
    state = await alice.expect("state")
    await alice.send(MakeMove(room=room.room, move="d", seq=state.seq))
    answered = await alice.wait(lambda m: m.type == "state" and len(m.moves) == 2)
    await alice.send(Takeback(room=room.room))
    back = await alice.wait(lambda m: m.type == "state" and m.seq > answered.seq and m.moves == [])
    assert back.to_move == [0] and back.view["board"] == state.view["board"]
    assert back.clock.remaining_ms[1] == 60000


async def test_takeback_refused_in_live_games_and_before_any_move(pair):
    """A takeback is `not_allowed` in Tron, and when the asker has made no move yet."""
    alice, bob = pair
    code, _ = await seat_pair(alice, bob, "tron", {"countdown_ms": 0})
    reply = await alice.request(Takeback, room=code)
    assert reply.type == "error" and reply.code == "not_allowed"
    code, _ = await seat_pair(alice, bob, "connect4", {})
    reply = await bob.request(Takeback, room=code)
    assert reply.type == "error" and reply.code == "not_allowed"


async def test_the_player_to_move_aborts_before_their_first_move_at_once(pair):
    """The seat to move may abort before its first move, at once (no 60 s wait): the game ends with no winner."""
    alice, bob = pair
    code, _ = await seat_pair(alice, bob, "connect4", {"clock_s": 60})
    await alice.send(Abort(room=code))
    final = await bob.wait(lambda m: m.type == "state" and m.status == "finished")
    assert final.result.reason == "aborted" and final.result.winners == () and final.result.winner is None
    assert final.clock.running is None
    over = await alice.expect("event", kind="game_over")
    assert over.data["reason"] == "aborted"


async def test_either_player_aborts_until_both_made_two_moves(pair):
    """Until every side has made two moves either player may abort, whoever is to move: here bob after three."""
    alice, bob = pair
    code, state = await seat_pair(alice, bob, "connect4", {})
    state = await _play({0: alice, 1: bob}, code, state, ["d", "d", "d"])
    assert state.to_move == [1]
    await bob.send(Abort(room=code))
    final = await alice.wait(lambda m: m.type == "state" and m.status == "finished")
    assert final.result.reason == "aborted" and final.moves == ["d", "d", "d"]


async def test_abort_refused_once_both_sides_made_two_moves(pair):
    """Once each side has made two moves the game counts: abort is `not_allowed` for both (resign instead), and
    the game goes on."""
    alice, bob = pair
    code, state = await seat_pair(alice, bob, "connect4", {})
    state = await _play({0: alice, 1: bob}, code, state, ["d", "d", "d", "d"])
    for peer in (alice, bob):
        reply = await peer.request(Abort, room=code)
        assert reply.type == "error" and reply.code == "not_allowed" and "resign" in reply.message
    state = await _play({0: alice, 1: bob}, code, state, ["e"])
    assert state.status == "playing" and state.moves == ["d", "d", "d", "d", "e"]


async def test_abort_against_the_ai_before_your_first_move(pair):
    """A 1+0 game against the AI, which moved first: the human aborts before moving instead of losing on time."""
    alice, _ = pair
    room = await alice.request(CreateRoom, game="connect4", options={"ai_pace_ms": 0, "ai_ms": 50, "clock_s": 60})
    await alice.request(AddAi, room=room.room, seat=0, level=1)
    await alice.request(Join, room=room.room, seat=1)
    mine = await alice.wait(lambda m: m.type == "state" and m.to_move == [1] and len(m.moves) == 1)
    assert mine.status == "playing"
    await alice.send(Abort(room=room.room))
    final = await alice.wait(lambda m: m.type == "state" and m.status == "finished")
    assert final.result.reason == "aborted" and final.result.winners == () and final.moves == mine.moves


@pytest.mark.parametrize(
    ("game", "options", "words"),
    [
        ("othello", {"clock_s": -1}, "at least 0"),
        ("othello", {"clock_s": 10801}, "at most 10800"),
        ("pentago", {"increment_s": 181, "clock_s": 60}, "at most 180"),
        ("connect4", {"days_per_move": 15}, "at most 14"),
        ("othello", {"clock_s": 60, "days_per_move": 1}, "not both"),
        ("othello", {"clock_s": "60"}, "integer"),
        ("tron", {"clock_s": 60}, "no clock"),
        ("tron", {"increment_s": 1}, "no clock"),
    ],
)
async def test_bad_clock_options_are_refused(pair, game, options, words):
    """Negative or huge values, clock_s with days_per_move, and clock options on Tron get `bad_options`."""
    alice, _ = pair
    reply = await alice.request(CreateRoom, game=game, options=options)
    assert reply.type == "error" and reply.code == "bad_options" and words in reply.message


async def test_clock_options_are_offered_by_turn_based_games_only(pair):
    """welcome lists clock_s, increment_s and days_per_move for Othello, Pentago and Connect Four, not for Tron."""
    alice, _ = pair
    offered = {g.name: {o.name for o in g.options} for g in alice.welcome.games}
    for game in ("othello", "pentago", "connect4"):
        assert {"clock_s", "increment_s", "days_per_move"} <= offered[game]
    assert not {"clock_s", "increment_s", "days_per_move"} & offered["tron"]


async def test_spectators_see_the_clock(pair, clock_server):
    """A spectator's state carries the same clock as the players'."""
    alice, bob = pair
    code, _ = await seat_pair(alice, bob, "pentago", {"clock_s": 90})
    carol = await Peer.connect(f"ws://127.0.0.1:{clock_server.port}", "carol")
    await carol.request(Join, room=code, **{"role": "spectator"})
    seen = await carol.expect("state")
    assert seen.clock.remaining_ms == (90000, 90000) or seen.clock.remaining_ms[0] < 90000
    assert seen.clock.running == 0
    await carol.close()


async def test_a_dropped_mover_keeps_losing_time_under_wait(clock_server):
    """Under on_disconnect "wait", the mover's clock keeps running while they are gone: their flag still falls."""
    url = f"ws://127.0.0.1:{clock_server.port}"
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, state = await seat_pair(alice, bob, "othello", {"clock_s": 2, "on_disconnect": "wait"})
    assert state.to_move == [0]
    await alice.close()
    left = await bob.expect("event", kind="left")
    assert left.data == {"seat": 0, "connection": "lost"}
    clock_server.clock.advance(2.0)
    final = await bob.wait(lambda m: m.type == "state" and m.room == code and m.status == "finished")
    assert final.result.reason == "time" and final.result.winner == 1
    await bob.close()
