"""Lobby benchmark: W clients watch the lobby while R rooms are created and filled; the server's CPU for it.

    python bench/lobby.py [--watchers 250,500,1000] [--rooms 500] [--repeat 3] [--json]

For each watcher count: starts `python -m gamenight.server --port 0 --db :memory: --metrics` (per-address caps
off, as in bench/load.py), connects W watchers (each says hello, then subscribes to the lobby; they run in a
child process and only count the frames and bytes they receive) and P = rooms / ROOMS_PER_PAIR pairs of
players. Once everything is connected and quiet, the pairs create and fill the rooms (the host creates a room
and sits in seat 0, its partner takes seat 1, so each game starts), ROOMS_PER_PAIR rooms per pair in turn,
all pairs at once. Reported: the setup time (first create to the last room filled), the server's CPU seconds
from the first create until the watchers' frames stop (no frame for QUIET_S), and the frames and bytes the
watchers received. Medians of `--repeat` runs. The figures go in docs/performance.md ("Lobby").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import statistics
import sys
import time
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load import proc_sample, raise_file_limit, start_target  # noqa: E402
from gamenight.protocol import PROTOCOL_VERSION, decode, encode  # noqa: E402
from gamenight.protocol.codec import MAX_SERVER_FRAME  # noqa: E402
from gamenight.protocol.messages import CreateRoom, Hello, Join, LobbyWatch, Message  # noqa: E402

ROOMS_PER_PAIR = 5
CONNECT_CONCURRENCY = 64  # handshakes in flight at once (the listen backlog is 100)
QUIET_S = 3.0  # the lobby traffic is over when no watcher received a frame for this long (a busy machine stalls)
SETUP_TIMEOUT_S = 120.0
SETTLE_TIMEOUT_S = 120.0
MAX_WATCHERS = 4000


async def _hello(url: str, name: str, gate: asyncio.Semaphore) -> ClientConnection:
    """A connection that said hello and got its welcome."""
    async with gate:
        ws = await connect(url, max_size=MAX_SERVER_FRAME, open_timeout=60)
        await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name=name)))
        while decode(await ws.recv(), MAX_SERVER_FRAME).type != "welcome":
            pass
        return ws


def _watch_message() -> bytes | None:
    """The subscription a watcher sends after its welcome (protocol 1 servers pushed to every client in no room,
    and measured "before" with this returning None: commit 063df9c)."""
    return encode(LobbyWatch(on=True))


async def _watchers(
    url: str,
    count: int,
    frames: Synchronized[int],
    size: Synchronized[int],
    dropped: Synchronized[int],
    pipe: Connection,
) -> None:
    """Connect `count` watchers, report ready, count what they receive (and the connections the server closed)
    until told to stop."""
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    sockets = await asyncio.gather(*(_hello(url, f"watch{n}", gate) for n in range(count)))
    watch = _watch_message()
    if watch is not None:
        for ws in sockets:
            await ws.send(watch)

    stopping = False

    async def read(ws: ClientConnection) -> None:
        with contextlib.suppress(Exception):
            async for frame in ws:
                frames.value += 1
                size.value += len(frame)
        if not stopping:
            dropped.value += 1

    readers = [asyncio.create_task(read(ws)) for ws in sockets]
    pipe.send("ready")
    while not pipe.poll():
        await asyncio.sleep(0.05)
    pipe.recv()
    stopping = True
    for ws in sockets:
        await ws.close()
    await asyncio.gather(*readers)
    pipe.send("done")


def watchers_main(
    url: str,
    count: int,
    frames: Synchronized[int],
    size: Synchronized[int],
    dropped: Synchronized[int],
    pipe: Connection,
) -> None:
    """The watchers' process."""
    raise_file_limit()
    asyncio.run(_watchers(url, count, frames, size, dropped, pipe))


class Player:
    """A player connection that sends requests and waits for the reply with the same id."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = 0
        self.waiting: dict[int, asyncio.Future[Message]] = {}
        self.reader = asyncio.get_running_loop().create_task(self.read())

    async def read(self) -> None:
        """Route replies to their requests; everything else is dropped."""
        with contextlib.suppress(Exception):
            async for frame in self.ws:
                msg = decode(frame, MAX_SERVER_FRAME)
                future = self.waiting.pop(msg.id, None) if msg.id is not None else None
                if future is not None and not future.done():
                    future.set_result(msg)

    async def request(self, msg_cls: type[Message], **fields: Any) -> Message:
        """Send a request and return its reply (an error reply fails the run)."""
        self.ids += 1
        future = self.waiting[self.ids] = asyncio.get_running_loop().create_future()
        await self.ws.send(encode(msg_cls(id=self.ids, **fields)))
        reply = await asyncio.wait_for(future, SETUP_TIMEOUT_S)
        if reply.type == "error":
            raise RuntimeError(f"{msg_cls.type} refused: {reply}")
        return reply


async def _pair_rooms(host: Player, guest: Player, rooms: int) -> None:
    """One pair fills its rooms, one after the other: create, host sits in seat 0, guest in seat 1."""
    for _ in range(rooms):
        room = await host.request(CreateRoom, game="othello", options={})
        code = room.room  # type: ignore[attr-defined]
        await host.request(Join, room=code, seat=0)
        await guest.request(Join, room=code, seat=1)


async def one_run(watchers: int, rooms: int) -> dict[str, Any]:
    """One server, `watchers` watchers, `rooms` rooms created and filled; the figures."""
    target = start_target("game", "othello", 1)
    context = multiprocessing.get_context("spawn")
    frames, size, dropped = (context.Value("q", 0, lock=False) for _ in range(3))
    ours, theirs = context.Pipe()
    child = context.Process(
        target=watchers_main, args=(target.url, watchers, frames, size, dropped, theirs), daemon=True
    )
    try:
        child.start()
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
        pairs = max(1, rooms // ROOMS_PER_PAIR)
        sockets = await asyncio.gather(*(_hello(target.url, f"play{n}", gate) for n in range(2 * pairs)))
        players = [Player(ws) for ws in sockets]
        while not ours.poll():
            await asyncio.sleep(0.05)
        ours.recv()
        await _quiet(frames)
        before_frames, before_bytes = frames.value, size.value
        cpu0 = proc_sample(target.pid()).get("cpu_s", 0.0)
        started = time.monotonic()
        share = [rooms // pairs + (1 if k < rooms % pairs else 0) for k in range(pairs)]
        await asyncio.gather(*(_pair_rooms(players[2 * k], players[2 * k + 1], share[k]) for k in range(pairs)))
        setup_s = time.monotonic() - started
        await _quiet(frames)
        cpu_s = proc_sample(target.pid()).get("cpu_s", 0.0) - cpu0
        got_frames, got_bytes = frames.value - before_frames, size.value - before_bytes
        ours.send("stop")
        for player in players:
            await player.ws.close()
        return {
            "watchers": watchers,
            "rooms": rooms,
            "setup_s": round(setup_s, 2),
            "server_cpu_s": round(cpu_s, 2),
            "frames": got_frames,
            "frames_per_watcher": round(got_frames / watchers, 1) if watchers else 0,
            "kib_per_watcher": round(got_bytes / 1024 / watchers, 1) if watchers else 0,
            "watchers_dropped": dropped.value,  # closed by the server (e.g. for falling 1 MiB behind)
        }
    finally:
        child.join(10)
        if child.is_alive():
            child.kill()
        target.stop()


async def _quiet(frames: Synchronized[int]) -> None:
    """Wait until no watcher frame arrived for QUIET_S (at most SETTLE_TIMEOUT_S)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    last, since = frames.value, time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        if frames.value != last:
            last, since = frames.value, time.monotonic()
        elif time.monotonic() - since >= QUIET_S:
            return


def main(argv: list[str] | None = None) -> int:
    """Run every watcher count `--repeat` times; print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", default="0,250,500,1000", help="comma-separated watcher counts")
    parser.add_argument("--rooms", type=int, default=500, help="rooms created and filled (default 500)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per count, the median is shown (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON line per count")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.watchers.split(",") if c.strip()]
    if not counts or any(not 0 <= c <= MAX_WATCHERS for c in counts) or not 1 <= args.rooms <= 2000:
        parser.error(f"watchers 0..{MAX_WATCHERS}, rooms 1..2000")
    raise_file_limit()
    for count in counts:
        runs = [asyncio.run(one_run(count, args.rooms)) for _ in range(max(1, args.repeat))]
        median = {
            key: statistics.median(run[key] for run in runs) if isinstance(runs[0][key], float | int) else runs[0][key]
            for key in runs[0]
        }
        median["runs"] = len(runs)
        median["server_cpu_s_each"] = [run["server_cpu_s"] for run in runs]
        median["setup_s_each"] = [run["setup_s"] for run in runs]
        if args.json:
            print(json.dumps(median), flush=True)
        else:
            print(
                f"{count:5d} watchers, {args.rooms} rooms: setup {median['setup_s']:.2f} s, server CPU "
                f"{median['server_cpu_s']:.2f} s (runs {median['server_cpu_s_each']}), {median['frames']:.0f} frames "
                f"({median['frames_per_watcher']:.1f} per watcher, {median['kib_per_watcher']:.1f} KiB), "
                f"{median['watchers_dropped']:.0f} watchers dropped by the server",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
