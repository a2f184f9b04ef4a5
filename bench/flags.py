"""Flag-fall accuracy: how late after a clock reaches zero the server ends the game, over many flags.

    python bench/flags.py [--flags 100] [--clock-s 2] [--concurrency 10] [--load-connections 0] [--json]

Starts `python -m gamenight.server --port 0 --db FILE --metrics` (a real SQLite file in a temporary folder), and with
`--load-connections N` also `bench/load.py --url ... --connections N --rate R` against the same server, so the
flags fall while N players move at `--load-rate` moves per second each (a human pace by default). Then it plays
`--flags` games in which the first mover never moves, `--concurrency` at a time, at `--clock-s` per seat, and
measures for each:

- server: the final state's `clock.at_ms` (when the server decided the flag) minus the first state's `at_ms`
  minus the mover's time — how late the server's timer ended the game after the time reached zero;
- client: from receiving the first state to receiving the final one, minus the mover's time — what a player
  sees (adds the delivery of both frames).

Prints p50 / p90 / p99 / max of both in milliseconds. The flag grace is 0 here: the clients are on loopback and
the server's lag estimate for them stays near 0 (docs/protocol.md, Clocks).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load import launch  # noqa: E402
from gamenight.protocol import PROTOCOL_VERSION, decode, encode  # noqa: E402
from gamenight.protocol.messages import CreateRoom, Hello, Join, ListRooms, Message, Rooms, State  # noqa: E402

START_TIMEOUT_S = 20.0
LOAD_READY_TIMEOUT_S = 180.0
LOAD_SETTLE_S = 15.0
FLAG_TIMEOUT_S = 60.0


class Client:
    """A bare protocol client: sends messages, reads frames into a queue."""

    def __init__(self, ws) -> None:  # type: ignore[no-untyped-def]
        self.ws = ws
        self.queue: asyncio.Queue[tuple[float, Message]] = asyncio.Queue()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, url: str, name: str) -> Client:
        """Connect and say hello."""
        client = cls(await connect(url, max_size=2**22))
        await client.send(Hello(protocol=PROTOCOL_VERSION, name=name))
        await client.wait(lambda m: m.type == "welcome")
        return client

    async def _read(self) -> None:
        """Stamp every message with its arrival time."""
        async for frame in self.ws:
            self.queue.put_nowait((time.monotonic(), decode(frame, 1 << 24)))

    async def send(self, msg: Message) -> None:
        """Send one message."""
        await self.ws.send(encode(msg))

    async def wait(self, match) -> tuple[float, Message]:  # type: ignore[no-untyped-def]
        """The next message `match` accepts, with its arrival time."""
        while True:
            at, msg = await asyncio.wait_for(self.queue.get(), FLAG_TIMEOUT_S)
            if match(msg):
                return at, msg

    async def close(self) -> None:
        """Close the connection."""
        await self.ws.close()
        self.reader.cancel()


async def one_flag(url: str, clock_s: int, index: int) -> tuple[float, float]:
    """Play one game the first mover never moves in; returns (server ms late, client ms late)."""
    a, b = await Client.open(url, f"flag{index}a"), await Client.open(url, f"flag{index}b")
    try:
        await a.send(CreateRoom(game="connect4", options={"clock_s": clock_s}, id=1))
        _, room = await a.wait(lambda m: m.type == "room" and m.id == 1)
        code = room.room  # type: ignore[attr-defined]
        await a.send(Join(room=code, seat=0, id=2))
        await b.send(Join(room=code, seat=1, id=3))
        got_first, first = await a.wait(lambda m: isinstance(m, State) and m.status == "playing")
        got_last, last = await a.wait(lambda m: isinstance(m, State) and m.status == "finished")
        assert isinstance(first, State) and isinstance(last, State) and first.clock and last.clock
        assert last.result is not None and last.result.reason == "time", last.result
        left = first.clock.remaining_ms[0]
        server_late = last.clock.at_ms - first.clock.at_ms - left
        client_late = (got_last - got_first) * 1000 - left
        return float(server_late), client_late
    finally:
        await a.close()
        await b.close()


async def run_flags(url: str, flags: int, clock_s: int, concurrency: int) -> list[tuple[float, float]]:
    """All the flags, `concurrency` games at a time (starts spread over a second)."""
    gate = asyncio.Semaphore(concurrency)
    results: list[tuple[float, float]] = []

    async def one(i: int) -> None:
        async with gate:
            await asyncio.sleep((i % concurrency) / concurrency)
            results.append(await one_flag(url, clock_s, i))

    await asyncio.gather(*(one(i) for i in range(flags)))
    return results


async def rooms_playing(url: str) -> int:
    """How many rooms of the lobby are playing now (the load's games, once they run)."""
    client = await Client.open(url, "counter")
    try:
        await client.send(ListRooms(id=1))
        _, rooms = await client.wait(lambda m: isinstance(m, Rooms))
        assert isinstance(rooms, Rooms)
        return sum(1 for room in rooms.rooms if room.status == "playing")
    finally:
        await client.close()


def wait_for_load(url: str, rooms: int) -> int:
    """Wait until most (80%) of the load's `rooms` games are playing; returns how many are."""
    deadline = time.monotonic() + LOAD_READY_TIMEOUT_S
    while True:
        playing = asyncio.run(rooms_playing(url))
        if playing >= rooms * 0.8 or time.monotonic() > deadline:
            return playing
        time.sleep(2)


def start_server(db: str) -> tuple[subprocess.Popen[str], str]:
    """The game server on a free loopback port; returns it and its URL."""
    # --metrics: bench/load.py reads (and resets) the server's /metrics when it loads an existing server
    return launch(
        [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", db, "--metrics", "--log-level", "warning"]
    )


def percentiles(values: list[float]) -> dict[str, float]:
    """p50, p90, p99 and max, rounded to 0.1 ms."""
    ordered = sorted(values)
    cut = statistics.quantiles(ordered, n=100, method="inclusive")
    return {
        "p50": round(cut[49], 1),
        "p90": round(cut[89], 1),
        "p99": round(cut[98], 1),
        "max": round(ordered[-1], 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flags", type=int, default=100)
    parser.add_argument("--clock-s", type=int, default=2, help="each seat's time (default 2)")
    parser.add_argument("--concurrency", type=int, default=10, help="games waiting for their flag at once")
    parser.add_argument("--load-connections", type=int, default=0, help="players of bench/load.py meanwhile")
    parser.add_argument("--load-rate", type=float, default=1.0, help="their moves per second each (default 1)")
    parser.add_argument("--json", action="store_true", help="print one machine-readable line")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        server, url = start_server(str(Path(folder) / "flags.db"))
        load: subprocess.Popen[str] | None = None
        load_before = load_after = 0
        try:
            if args.load_connections:
                # The load runs longer than the flags take; it is stopped when they are done.
                seconds = 600  # bench/load.py's longest run: far more than the flags take
                load = subprocess.Popen(
                    [
                        sys.executable,
                        str(ROOT / "bench" / "load.py"),
                        "--url",
                        url,
                        "--connections",
                        str(args.load_connections),
                        "--rate",
                        str(args.load_rate),
                        "--seconds",
                        str(int(seconds)),
                        "--warmup",
                        "5",
                        "--json",
                    ],
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,  # its workers complain when the server goes away under them
                    text=True,
                )
                load_before = wait_for_load(url, args.load_connections // 2)
                time.sleep(LOAD_SETTLE_S)  # the load's warm-up: its players are moving before the first flag
            results = asyncio.run(run_flags(url, args.flags, args.clock_s, args.concurrency))
            if load is not None:
                load_after = asyncio.run(rooms_playing(url))
                if load.poll() is not None:
                    print("warning: the load stopped before the flags were done", file=sys.stderr)
                    load_after = -1
        finally:
            for proc in (load, server):
                if proc is not None and proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(15)
                    except subprocess.TimeoutExpired:
                        proc.kill()
    server_late = percentiles([r[0] for r in results])
    client_late = percentiles([r[1] for r in results])
    figures = {
        "flags": len(results),
        "clock_s": args.clock_s,
        "load_connections": args.load_connections,
        "load_rate": args.load_rate,
        "load_rooms_playing": [load_before, load_after],
        "server_late_ms": server_late,
        "client_late_ms": client_late,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"{len(results)} flags at {args.clock_s} s, load {args.load_connections} players at {args.load_rate}/s")
        if args.load_connections:
            print(f"  load rooms playing before / after the flags: {load_before} / {load_after}")
        print(f"  server: how late the flag fell after zero (ms): {server_late}")
        print(f"  client: final state received after zero (ms):    {client_late}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
