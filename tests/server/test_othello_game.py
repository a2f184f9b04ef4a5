"""Integration: two real websocket clients play Othello through the real server, refereed end to end."""

from __future__ import annotations

import random

from gamenight.protocol.messages import CreateRoom, Join, MakeMove, Moved
from tests.peer import Peer, seat_pair


async def _room_with_two_players(peers, game: str = "othello", options: dict | None = None):
    """Create a room and seat two players; returns (black, white, room code, first state)."""
    alice: Peer = await peers("alice")
    bob: Peer = await peers("bob")
    code, first = await seat_pair(alice, bob, game, options)
    await bob.expect("state", seq=first.seq)
    return alice, bob, code, first


async def test_full_game_to_the_end(peers):
    """Two players finish an 8x8 game from `legal`; both see the same final state and the right winner."""
    alice, bob, code, state = await _room_with_two_players(peers)
    watcher: Peer = await peers("carol")
    await watcher.request(Join, room=code, role="spectator")
    rng = random.Random(7)
    by_seat = {0: alice, 1: bob}
    while state.status == "playing":
        mover = by_seat[state.to_move[0]]
        legal = (await mover.at(code, state.seq)).legal
        await mover.send(MakeMove(room=code, move=rng.choice(legal), seq=state.seq))
        state = await alice.expect("state", seq=state.seq + 1)
    final_bob = await bob.expect("state", seq=state.seq)
    assert final_bob.view == state.view and final_bob.result == state.result
    black, white = state.view["scores"]
    over = await alice.expect("event", kind="game_over")
    expected = 0 if black > white else 1 if white > black else None
    assert over.data["winner"] == expected and state.result is not None and state.result.winner == expected
    await watcher.expect("state", seq=state.seq)
    watched = [m.seq for m in watcher.seen if isinstance(m, Moved)]
    assert watched == list(range(watched[0], state.seq + 1)), "the spectator missed or reordered a move"


async def test_illegal_move_leaves_state_unchanged(peers):
    """An illegal square gets `illegal_move` and the position is unchanged (same seq, same board)."""
    alice, _bob, code, state = await _room_with_two_players(peers)
    reply = await alice.request(MakeMove, room=code, move="a1", seq=state.seq)
    assert reply.type == "error" and reply.code == "illegal_move"
    again = await alice.request(Join, room=code)
    assert again.type == "joined"
    snapshot = await alice.expect("state", seq=state.seq)
    assert snapshot.view == state.view


async def test_move_out_of_turn(peers):
    """White moving on black's turn gets `not_your_turn`."""
    _alice, bob, code, state = await _room_with_two_players(peers)
    reply = await bob.request(MakeMove, room=code, move=state.legal[0], seq=state.seq)
    assert reply.type == "error" and reply.code == "not_your_turn"


async def test_stale_seq_rejected(peers):
    """A move made against an older seq (a double click) is refused as `stale`."""
    alice, bob, code, state = await _room_with_two_players(peers)
    await alice.send(MakeMove(room=code, move=state.legal[0], seq=state.seq))
    after = await bob.expect("state", seq=state.seq + 1)
    reply = await bob.request(MakeMove, room=code, move=after.legal[0], seq=state.seq)
    assert reply.type == "error" and reply.code == "stale"


async def test_third_player_cannot_take_a_filled_seat(peers):
    """A third player asking for a taken seat gets `seat_taken`; with no seat named, `room_full`."""
    _alice, _bob, code, _state = await _room_with_two_players(peers)
    dave: Peer = await peers("dave")
    reply = await dave.request(Join, room=code, seat=0)
    assert reply.type == "error" and reply.code in ("seat_taken", "room_full")
    reply = await dave.request(Join, room=code)
    assert reply.type == "error" and reply.code == "room_full"


async def test_a_seat_out_of_range_is_bad_message_in_any_room_state(peers):
    """A join naming a seat the room does not have is a malformed request (`bad_message`), before and after the
    game started, rather than the `room_full` a started game gives a well-formed join."""
    carol: Peer = await peers("carol")
    waiting = await carol.request(CreateRoom, game="othello", options={})
    for seat in (2, -1):
        reply = await carol.request(Join, room=waiting.room, seat=seat)
        assert reply.type == "error" and reply.code == "bad_message" and "seat must be 0..1" in reply.message
    _alice, _bob, code, _state = await _room_with_two_players(peers)
    dave: Peer = await peers("dave")
    for seat in (2, -1, 99):
        reply = await dave.request(Join, room=code, seat=seat)
        assert reply.type == "error" and reply.code == "bad_message", seat
    reply = await dave.request(Join, room=code, seat=1)
    assert reply.type == "error" and reply.code == "room_full", "a seat in range of a started game: room_full"


async def test_bad_options(peers):
    """Unknown games and invalid options (size 7) are refused with `bad_options`."""
    alice: Peer = await peers("alice")
    reply = await alice.request(CreateRoom, game="chess", options={})
    assert reply.type == "error" and reply.code == "bad_options"
    reply = await alice.request(CreateRoom, game="othello", options={"size": 7})
    assert reply.type == "error" and reply.code == "bad_options" and "size" in reply.message
