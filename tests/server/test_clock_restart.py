"""A clocked game survives SIGKILL + restart: the clocks come back as stored and the downtime is charged to nobody."""

from __future__ import annotations

import asyncio
import time

from gamenight.protocol.messages import CreateRoom, GetGame, Join, ListGames, MakeMove
from tests.peer import Peer

DOWNTIME_S = 2.0


async def _move(players: dict[int, Peer], code: str, state, move: str):
    """The seat to move plays `move`; returns the next state."""
    await players[state.to_move[0]].send(MakeMove(room=code, move=move, seq=state.seq))
    return await players[0].wait(lambda m: m.type == "state" and m.seq > state.seq)


async def test_clocks_resume_after_sigkill_without_charging_the_downtime(server_process):
    """After SIGKILL, the waiting seat's time is exactly as stored and the mover is charged only the new uptime."""
    first = server_process()
    alice, bob = await Peer.connect(first.url, "alice"), await Peer.connect(first.url, "bob")
    room = await alice.request(CreateRoom, game="connect4", options={"clock_s": 60, "increment_s": 1})
    code = room.room
    await alice.request(Join, room=code, seat=0)
    await bob.request(Join, room=code, seat=1)
    state = await alice.expect("state")
    players = {0: alice, 1: bob}
    for move in ("d", "d", "c"):
        await asyncio.sleep(0.3)
        state = await _move(players, code, state, move)
    stored = state.clock  # bob (seat 1) to move; alice's time is booked
    assert stored.running == 1 and 60000 < stored.remaining_ms[0] < 62000 - 500  # two moves of 0.3 s, +1 s each
    tokens = [alice.welcome.token, bob.welcome.token]
    first.kill()
    await alice.close()
    await bob.close()
    await asyncio.sleep(DOWNTIME_S)
    launched = time.monotonic()
    second = server_process()
    alice = await Peer.connect(second.url, "alice", resume=tokens[0])
    bob = await Peer.connect(second.url, "bob", resume=tokens[1])
    resumed = await bob.expect("state")
    uptime_ms = (time.monotonic() - launched) * 1000
    assert resumed.moves == ["d", "d", "c"] and resumed.clock.running == 1
    assert resumed.clock.remaining_ms[0] == stored.remaining_ms[0]
    charged = stored.remaining_ms[1] - resumed.clock.remaining_ms[1]
    assert 0 <= charged <= uptime_ms  # the clock ran only while the new server was up: never the downtime
    await alice.expect("state")
    state = await _move({0: alice, 1: bob}, code, resumed, "e")
    assert state.clock.running == 0 and state.clock.remaining_ms[1] <= resumed.clock.remaining_ms[1] + 1000
    games_before = await alice.request(ListGames)
    assert games_before.games == []
    await alice.close()
    await bob.close()
    assert second.stop() == 0


async def test_the_flag_still_falls_after_a_restart(server_process):
    """A restored clocked game arms its flag again: the silent mover loses on time with nobody connected."""
    first = server_process()
    alice, bob = await Peer.connect(first.url, "alice"), await Peer.connect(first.url, "bob")
    room = await alice.request(CreateRoom, game="pentago", options={"clock_s": 3})
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    await alice.expect("state")
    first.kill()
    await alice.close()
    await bob.close()
    second = server_process()
    await asyncio.sleep(3 + 1.5)
    watcher = await Peer.connect(second.url, "watcher")
    games = await watcher.request(ListGames)
    assert len(games.games) == 1
    record = await watcher.request(GetGame, game_id=games.games[0]["game_id"])
    assert record.record["result"]["reason"] == "time" and record.record["result"]["winner"] == 1
    await watcher.close()
    assert second.stop() == 0


def test_a_takeback_is_undone_on_disk_too(tmp_path):
    """After a takeback the stored log and times are those of the earlier position, so a restart resumes there."""
    from gamenight.server.records import ClockSaved, GameFinished, GameStarted, MoveRecorded, MovesUndone, RoomSaved
    from gamenight.server.store import Store

    store = Store(str(tmp_path / "games.db"))
    store.write([RoomSaved("ABCDE", "connect4", {}, {"clock_s": 60}, "ann", False), GameStarted("ABCDE", 1)])
    store.write([ClockSaved("ABCDE", 1, 0, [60000, 60000])])
    for ply, (move, spent) in enumerate([("d", 500), ("d", 700), ("c", 900)]):
        times = [60000 - 500, 60000] if ply == 0 else [60000 - 500, 60000 - 700]
        store.write([MoveRecorded("ABCDE", 1, ply, move, spent), ClockSaved("ABCDE", 1, ply + 1, times)])
    store.write([MovesUndone("ABCDE", 1, 1)])
    (room,) = store.unfinished_rooms()
    assert room.moves == ["d"] and room.move_ms == [500]
    assert room.clocks == [[60000, 60000], [59500, 60000]]
    clock = {"initial_ms": 60000, "increment_ms": 0, "days_per_move": 0, "move_ms": [500]}
    store.write([GameFinished("ABCDE", 1, "connect4", {}, [], {"reason": "time", "winners": [1]}, ["d"], "d", clock)])
    games = store.list_games()
    assert store.get_game(games[0]["game_id"])["clock"] == clock
    store.close()
