"""Lag compensation: refunds from ping round trips, bounded by a quota that grows per move and is capped."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from gamenight.protocol.messages import CreateRoom, GetGame, Join, ListGames, MakeMove, Resign
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.clock import GameClock, LagTracker, quota_gain_ms
from tests.peer import Peer

ONE_WAY_S = 0.075  # the proxy's delay each way: a 150 ms round trip


class DelayProxy:
    """A TCP proxy on loopback that holds every chunk `delay` seconds in each direction (order kept)."""

    def __init__(self, target_port: int, delay: float) -> None:
        self.target_port, self.delay = target_port, delay
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        """Listen on a free port; returns it."""
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Pipe one connection to the target, delayed both ways."""
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.get_running_loop().create_task(self._pipe(source, sink))
            self.tasks.add(task)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        """Copy chunks, each written `delay` after it was read."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def later() -> None:
            while True:
                due, chunk = await queue.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if not chunk:
                    sink.close()
                    return
                sink.write(chunk)

        writer = loop.create_task(later())
        try:
            while True:
                chunk = await source.read(65536)
                queue.put_nowait((loop.time() + self.delay, chunk))
                if not chunk:
                    break
            await writer
        except (ConnectionError, asyncio.CancelledError):
            writer.cancel()

    async def stop(self) -> None:
        """Stop listening and drop every piped connection."""
        assert self.server is not None
        self.server.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def test_refunds_follow_a_150_ms_lag_and_never_exceed_the_time_taken():
    """With pings at 150 ms, each move gets 150 ms back (never more than the move took, never more than the lag)."""
    clock = GameClock.from_options({"clock_s": 60}, 2)
    assert clock is not None
    for _ in range(5):
        clock.lag[0].record(150.0)
    now = 100.0
    for _ in range(20):
        clock.start(0, now)
        charge = clock.measure(0, now + 0.5)
        assert charge.refund_ms == 150 and charge.spent_ms == 350
        clock.settle(charge)
        now += 1.0
    assert clock.remaining[0] == 60000 - 20 * 350
    clock.start(0, now)
    quick = clock.measure(0, now + 0.04)  # a move faster than the lag gets back only what it took
    assert quick.refund_ms == 40 and quick.spent_ms == 0


def test_faked_lag_is_bounded_by_the_quota():
    """A client claiming 1 s of lag gets the starting quota, then only the quota's gain per move."""
    gain = quota_gain_ms(60_000, 0)
    assert gain == 390  # (60 s + 40 * 0) / 2.5 centiseconds + 15 = 39 centiseconds
    tracker = LagTracker.for_clock(60_000, 0)
    assert (tracker.quota_ms, tracker.max_ms) == (3 * gain, 7 * gain)
    tracker.record(1000.0)
    refunds = []
    for _ in range(6):
        refund = tracker.refund(5000)
        tracker.on_move(refund)
        refunds.append(refund)
    assert refunds == [1000, 3 * gain + gain - 1000, gain, gain, gain, gain]
    honest = LagTracker.for_clock(60_000, 0)
    honest.record(100.0)
    for _ in range(50):
        honest.on_move(honest.refund(5000))
    assert honest.quota_ms == 7 * gain  # an honest client's quota fills up to the cap and stops there


def test_the_flag_waits_for_a_move_the_lag_may_still_be_carrying():
    """The flag falls at zero plus the refund a move would still get (at most 1 s), not before."""
    clock = GameClock.from_options({"clock_s": 2}, 2)
    assert clock is not None
    clock.start(0, 0.0)
    assert clock.deadline_ms(0.0) == 2000 and not clock.out_of_time(1.999) and clock.out_of_time(2.0)
    clock.lag[0].record(150.0)
    assert clock.deadline_ms(0.0) == 2150 and not clock.out_of_time(2.1) and clock.out_of_time(2.15)
    late = clock.measure(0, 2.1)  # arrived 100 ms after zero: within the lag, so it counts
    assert not late.flagged


@pytest.fixture
async def lag_server(tmp_path) -> AsyncIterator[GameServer]:
    """A server on a database file that pings clocked players every 0.2 s."""
    server = GameServer(ServerConfig(port=0, ai_workers=1, db=str(tmp_path / "games.db"), lag_probe_s=0.2))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_a_player_behind_150_ms_of_lag_is_refunded_it(lag_server):
    """Over real websockets through a 150 ms proxy, instant moves cost far less than the round trip they take."""
    proxy = DelayProxy(lag_server.port, ONE_WAY_S)
    port = await proxy.start()
    far = await Peer.connect(f"ws://127.0.0.1:{port}", "far")
    near = await Peer.connect(f"ws://127.0.0.1:{lag_server.port}", "near")
    try:
        room = await near.request(CreateRoom, game="connect4", options={"clock_s": 60})
        await far.request(Join, room=room.room, seat=0)
        await near.request(Join, room=room.room, seat=1)
        state = await near.expect("state")
        await asyncio.sleep(1.0)  # a few pings: the server's estimate of far's lag
        moves = ["a", "b", "a", "b", "a", "b", "c", "c"]
        players = {0: far, 1: near}
        for move in moves:
            await players[state.to_move[0]].send(MakeMove(room=room.room, move=move, seq=state.seq))
            # the next mover answers as soon as it sees the state: far sees it 75 ms after it was sent
            state = await players[state.to_move[0] ^ 1].wait(lambda m, s=state.seq: m.type == "state" and m.seq > s)
        await near.send(Resign(room=room.room))
        await near.wait(lambda m: m.type == "state" and m.status == "finished")
        games = await near.request(ListGames)
        record = await near.request(GetGame, game_id=games.games[0]["game_id"])
        spent = record.record["clock"]["move_ms"]
        far_spent = spent[2::2]  # far's moves after the first (which waited for the pings)
        assert all(ms >= 0 for ms in spent)
        assert sum(far_spent) / len(far_spent) < 120, far_spent  # 150 ms round trip each, refunded
    finally:
        await far.close()
        await near.close()
        await proxy.stop()
