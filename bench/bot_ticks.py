"""How often a Tron engine seated by `gamenight-bot` answers a tick in time.

Usage (from the repository root):
    python -m bench.bot_ticks [--tick-ms 50] [--games 5] [--overhead-ms 50] [--size 20]
        [--engine "python tests/engines/tron2010_bot.py"] [--protocol tron2010]

Starts a local server, runs two bot runners in this process (the same engine in each), and has a host invite
both into `--games` rooms (a random `--size` arena each, seeds 0, 1, ...) and watch each game to its end. Prints
the ticks played, the questions the engines were asked (one per rider per tick), how many were answered in time
and how many were late (the rider then keeps its direction). Figures are printed, never asserted: they depend on
the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import shlex
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from bench.load import ROOT, launch
from gamenight.client.bot.runner import BotConfig, BotRunner, bot_key
from gamenight.protocol import PROTOCOL_VERSION, decode, encode
from gamenight.protocol.codec import MAX_SERVER_FRAME
from gamenight.protocol.messages import Batch, CreateRoom, Hello, Invite, Join, ListPlayers, Message, State
from gamenight.protocol.vocab import Role, RoomStatus

HANG_S = 120.0


class LateTicks(logging.Handler):
    """Counts the runner's "late for tick" log records."""

    def __init__(self) -> None:
        super().__init__()
        self.late = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "engine late for tick" in record.getMessage():
            self.late += 1


class Host:
    """A plain protocol client: numbered requests, and a wait for the first message that matches."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.ids = itertools.count(1)

    async def request(self, message: Message) -> Message:
        """Send a request and return the reply that echoes its id."""
        rid = next(self.ids)
        await self.ws.send(encode(replace(message, id=rid)))
        return await self.wait(lambda m: m.id == rid)

    async def wait(self, match: Any) -> Message:
        """The next message for which `match` is true (others are dropped; a spectator's `batch` is looked into)."""
        async with asyncio.timeout(HANG_S):
            while True:
                message = decode(await self.ws.recv(), MAX_SERVER_FRAME)
                for inner in message.messages if isinstance(message, Batch) else [message]:
                    if match(inner):
                        return inner


async def run(args: argparse.Namespace) -> None:
    """Play the games and print the figures."""
    proc, url = launch([sys.executable, "-m", "gamenight.server", "--port", "0", "--db", ":memory:"])
    folder = Path(tempfile.mkdtemp(prefix="bot-ticks-"))
    counter = LateTicks()
    logger = logging.getLogger("gamenight.bot")
    logger.addHandler(counter)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    runners, tasks = [], []
    try:
        for name in ("rider1", "rider2"):
            config = BotConfig(url, name, "tron", args.engine, args.protocol, folder / f"{name}.key")
            config.move_overhead_ms, config.log_dir = args.overhead_ms, folder
            runner = BotRunner(config, bot_key(folder / f"{name}.key"))
            runners.append(runner)
            tasks.append(asyncio.create_task(runner.run()))
        async with connect(url, max_size=MAX_SERVER_FRAME) as ws:
            host = Host(ws)
            await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name="host")))
            await host.wait(lambda m: m.type == "welcome")
            while len([p for p in (await host.request(ListPlayers())).players if p.games]) < 2:  # type: ignore[attr-defined]
                await asyncio.sleep(0.05)
            ticks = 0
            for seed in range(args.games):
                options = {"map": "random", "width": args.size, "height": args.size, "seed": seed}
                room = await host.request(CreateRoom(game="tron", options={**options, "tick_ms": args.tick_ms}))
                code = room.room  # type: ignore[attr-defined]
                await host.request(Join(room=code, role=Role.SPECTATOR))
                for seat, name in enumerate(("rider1", "rider2")):
                    sent = await host.request(Invite(room=code, seat=seat, to=name))
                    await host.wait(lambda m, s=sent: m.type == "challenge_gone" and m.challenge == s.challenge)
                final = await host.wait(
                    lambda m, c=code: isinstance(m, State) and m.room == c and m.status == RoomStatus.FINISHED
                )
                assert isinstance(final, State)
                ticks += int(final.view["tick"])
        answered = sum(r.answers for r in runners)
        asked = answered + counter.late
        print(
            f"tick_ms={args.tick_ms} overhead_ms={args.overhead_ms} {args.protocol}: {args.games} games, "
            f"{ticks} ticks, {asked} questions, {answered} answered in time, {counter.late} late "
            f"({100 * counter.late / max(1, asked):.1f}%)"
        )
    finally:
        for runner in runners:
            runner.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        proc.kill()
        proc.wait()


def main() -> None:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tick-ms", type=int, default=50)
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--overhead-ms", type=int, default=50)
    parser.add_argument("--size", type=int, default=20)
    default_engine = f"{shlex.quote(sys.executable)} {ROOT / 'tests' / 'engines' / 'tron2010_bot.py'}"
    parser.add_argument("--engine", default=default_engine)
    parser.add_argument("--protocol", default="tron2010")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
