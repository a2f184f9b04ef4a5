"""Integration: Tron played live over websockets on the server's tick clock."""

from __future__ import annotations

from gamenight.protocol.messages import CreateRoom, Join, MakeMove, Resign
from tests.peer import Peer

TINY = {"map": "test-board", "tick_ms": 50, "countdown_ms": 0}


async def _tron_pair(peers, options: dict):
    """Two players seated in a fresh Tron room; returns them, the code and the first (full) state."""
    p1: Peer = await peers("one")
    p2: Peer = await peers("two")
    room = await p1.request(CreateRoom, game="tron", options=options)
    await p1.request(Join, room=room.room, seat=0)
    await p2.request(Join, room=room.room, seat=1)
    first = await p1.expect("state")
    await p2.expect("state", seq=first.seq)
    return p1, p2, room.room, first


async def test_crash_into_wall_loses(peers):
    """On test-board, player 1 steering north hits the wall on the first tick and player 2 wins."""
    p1, p2, code, first = await _tron_pair(peers, {**TINY, "countdown_ms": 300})
    assert first.view["board"][1] == "#1# 2#" and first.next_tick_ms == 350  # the countdown, then one tick
    await p1.send(MakeMove(room=code, move="N"))
    await p2.send(MakeMove(room=code, move="W"))
    over = await p2.expect("event", kind="game_over")
    assert over.data["winner"] == 1 and over.data["reason"] == "crash"
    final = await p1.wait(lambda m: m.type == "state" and m.status == "finished")
    assert final.view["alive"] == [False, True] and final.view["tick"] == 1


async def test_clock_ticks_without_any_input(peers):
    """With no input at all the arena still advances: both ride their default way into walls and draw."""
    p1, _p2, _code, first = await _tron_pair(peers, TINY)
    ticks = []
    while True:
        msg = await p1.wait(lambda m, after=first.seq: m.type == "tick" and m.seq > after)
        ticks.append(msg.view["tick"])
        first = msg
        if any(note.kind == "game_over" for note in msg.events):
            break  # the last tick is a tick like the others; the final state follows
    assert ticks == list(range(1, len(ticks) + 1))
    final = await p1.wait(lambda m: m.type == "state" and m.status == "finished")
    assert final.seq == first.seq and final.view["tick"] == ticks[-1]
    over = await p1.expect("event", kind="game_over")
    assert over.data["winner"] is None and sorted(over.data["winners"]) == [0, 1]


async def test_last_direction_in_a_tick_counts(peers):
    """Several moves in one tick: only the last one is used."""
    p1, p2, code, _first = await _tron_pair(peers, {**TINY, "countdown_ms": 400})
    for move in ("N", "W", "S"):
        await p1.send(MakeMove(room=code, move=move))
    await p2.send(MakeMove(room=code, move="W"))
    tick = await p1.expect("tick")
    assert tick.view["heads"][0] == [1, 2] and tick.view["alive"] == [True, True]


async def test_bad_direction_is_illegal(peers):
    """A move that is not a direction gets `illegal_move` and the game goes on."""
    p1, _p2, code, _first = await _tron_pair(peers, {**TINY, "countdown_ms": 2000})
    reply = await p1.request(MakeMove, room=code, move="up-ish")
    assert reply.type == "error" and reply.code == "illegal_move"


async def test_tron_rooms_list_official_maps(peers):
    """`welcome.games` offers Tron with the official maps among its `map` choices."""
    peer: Peer = await peers()
    tron = next(g for g in peer.welcome.games if g.name == "tron")
    maps = tron.option("map")
    assert maps is not None
    assert {"joust", "u", "random"} <= set(maps.choices or ())


async def test_a_rider_who_resigns_gets_no_crash_event(peers):
    """In a three-rider game a resigning rider is announced `retired` and stops on the next tick, which shows it
    out without a `crash` event for it (the log says it resigned, not that it crashed)."""
    riders: list[Peer] = [await peers(name) for name in ("one", "two", "three")]
    options = {"players": 3, "width": 30, "height": 30, "seed": 4, "tick_ms": 300, "countdown_ms": 1000}
    room = await riders[0].request(CreateRoom, game="tron", options=options)
    for seat, rider in enumerate(riders):
        await rider.request(Join, room=room.room, seat=seat)
    first = await riders[0].expect("state", room=room.room)
    assert first.view["alive"] == [True, True, True]
    await riders[1].send(Resign(room=room.room))
    retired = await riders[0].expect("event", kind="retired")
    assert retired.data == {"seat": 1, "reason": "resign"}
    out = await riders[0].wait(lambda m: m.type == "tick" and not m.view["alive"][1])
    assert out.move.split()[1] == "x", "the tick's joint move logs the resignation"
    assert not [note for note in out.events if note.kind == "crash" and note.data["seat"] == 1]
    assert not [m for m in riders[0].seen if m.type == "tick" and any(n.data.get("seat") == 1 for n in m.events)]
