"""Server CPU per history request, in the server process and in its helper processes (the history worker).

    python bench/history_cost.py [--requests 1600] [--games 20000]

Starts `python -m gamenight.server` on a SQLite file holding `--games` finished games (as bench/hostile.py
writes them), with the per-connection and per-address message limits off, warms it with 20 requests, then 8
connections each ask `list_games {player, limit: 200}` and `get_game` in turn, waiting for both answers, until
`--requests` have been answered. Prints the server process's CPU per request and its helpers' (every process
below it: the history worker, the AI workers, the forkserver), from /proc. Before session 7 the history thread
did its queries and replays inside the server process; since, the worker does them in its own.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.hostile import cpu_s, fill_history, helpers_cpu_s  # noqa: E402
from bench.load import launch  # noqa: E402
from gamenight.protocol import PROTOCOL_VERSION, decode, encode  # noqa: E402
from gamenight.protocol.messages import GetGame, Hello, ListGames  # noqa: E402

CONNECTIONS = 8


async def ask(ws: ClientConnection, rng: random.Random, pairs: int, games: int) -> None:
    """`pairs` times: list_games of a random player and get_game of a random id, both answers awaited."""
    for _ in range(pairs):
        await ws.send(encode(ListGames(player=f"p{rng.randrange(200)}", limit=200, id=1)))
        await ws.send(encode(GetGame(game_id=rng.randrange(1, games), id=2)))
        answered = 0
        while answered < 2:
            if decode(await ws.recv(), 1 << 22).id in (1, 2):
                answered += 1


async def run(requests: int, games: int) -> None:
    """Start the server, warm it, measure, stop it."""
    db = str(Path(tempfile.mkdtemp(prefix="gamenight-history-")) / "games.db")
    fill_history(db, games)
    command = [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", db, "--log-level", "error"]
    proc, url = launch([*command, "--limit", "messages_per_ip_per_s=0", "--limit", "rate=0"])
    try:
        conns = []
        for k in range(CONNECTIONS):
            ws = await connect(url, max_size=1 << 22)
            await ws.recv()  # the hello_nonce (the server's first frame)
            await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name=f"reader{k}")))
            await ws.recv()
            conns.append(ws)
        await ask(conns[0], random.Random(99), 10, games)  # starts the worker (lazily, on the first request)
        await asyncio.sleep(0.5)
        own, helpers, start = cpu_s(proc.pid), helpers_cpu_s(proc.pid), time.perf_counter()
        pairs = requests // (2 * CONNECTIONS)
        await asyncio.gather(*(ask(ws, random.Random(k), pairs, games) for k, ws in enumerate(conns)))
        own, helpers, wall = cpu_s(proc.pid) - own, helpers_cpu_s(proc.pid) - helpers, time.perf_counter() - start
        done = pairs * 2 * CONNECTIONS
        print(
            f"{done} requests in {wall:.1f} s: server process {own / done * 1e6:.0f} us/request,"
            f" helper processes {helpers / done * 1e6:.0f} us/request",
            flush=True,
        )
    finally:
        proc.terminate()
        proc.wait(15)


def main() -> int:
    """Parse the command line and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1600, help="history requests measured")
    parser.add_argument("--games", type=int, default=20_000, help="finished games written into the history first")
    args = parser.parse_args()
    asyncio.run(run(args.requests, args.games))
    return 0


if __name__ == "__main__":
    sys.exit(main())
