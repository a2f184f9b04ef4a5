"""Server CPU per refused connection attempt (an address at its connection cap gets HTTP 429).

    python bench/refusals.py [--attempts 1000] [--rounds 3]

Starts `python -m gamenight.server --db :memory: --limit max_connections_per_ip=1`, holds one connection from
127.0.0.2, then makes `--attempts` websocket connection attempts from the same address, 10 at a time, each
refused with 429, and prints the server process's CPU time per attempt (/proc), once per round. This is what
the `chat_fanout` attack of bench/hostile.py makes the server do ~48 times a second (its 10 connections past
the cap retry every 0.2 s).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.hostile import ATTACKER_ADDRESS, cpu_s  # noqa: E402
from bench.load import launch  # noqa: E402
from gamenight.protocol import PROTOCOL_VERSION, encode  # noqa: E402
from gamenight.protocol.messages import Hello  # noqa: E402


async def attempt(url: str, counts: dict[str, int]) -> None:
    """One connection attempt from the capped address; counts a 429 (or anything else)."""
    try:
        ws = await connect(url, local_addr=(ATTACKER_ADDRESS, 0))
    except InvalidStatus as exc:
        counts["refused" if exc.response.status_code == 429 else "other"] += 1
        return
    except OSError:
        counts["other"] += 1
        return
    counts["other"] += 1
    await ws.close()


async def run(attempts: int, rounds: int) -> None:
    """Start the server, fill the address's cap, measure each round, stop it."""
    command = [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", ":memory:", "--log-level", "error"]
    proc, url = launch([*command, "--limit", "max_connections_per_ip=1"])
    try:
        holder = await connect(url, local_addr=(ATTACKER_ADDRESS, 0))
        await holder.recv()  # the hello_nonce (the server's first frame)
        await holder.send(encode(Hello(protocol=PROTOCOL_VERSION, name="holder")))
        await holder.recv()
        await asyncio.sleep(0.5)
        for n in range(rounds):
            counts = {"refused": 0, "other": 0}
            cpu, start = cpu_s(proc.pid), time.perf_counter()
            for _ in range(attempts // 10):
                await asyncio.gather(*(attempt(url, counts) for _ in range(10)))
            cpu, wall = cpu_s(proc.pid) - cpu, time.perf_counter() - start
            total = counts["refused"] + counts["other"]
            print(
                f"round {n + 1}: {counts['refused']} refused (429), {counts['other']} other, in {wall:.1f} s;"
                f" server CPU {cpu / total * 1e6:.0f} us per attempt",
                flush=True,
            )
        await holder.close()
    finally:
        proc.terminate()
        proc.wait(15)


def main() -> int:
    """Parse the command line and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attempts", type=int, default=1000, help="connection attempts per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each printed")
    args = parser.parse_args()
    asyncio.run(run(args.attempts, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
