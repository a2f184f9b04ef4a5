"""Helpers of the bot runner's end-to-end tests: a real server process, bots run in-process, a human-like peer."""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from gamenight.client.bot.runner import BotConfig, BotRunner, bot_key
from gamenight.protocol.messages import ChallengeRequest, ListPlayers, MakeMove, Message, State
from gamenight.protocol.vocab import RoomStatus
from tests.peer import Peer

ENGINES = Path(__file__).resolve().parents[1] / "engines"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "bots.md"
HANG_S = 15.0
"""The cap on any wait for something the test expects (a guard against a hang, never a speed target)."""


def engine(name: str, *flags: str) -> str:
    """The command line of a test engine under tests/engines (quoted for `--engine`)."""
    return " ".join([sys.executable, str(ENGINES / name), *flags])


def doc_bot(tmp: Path) -> str:
    """The command line of the JSON-lines example bot of docs/bots.md, written out as it stands in the doc."""
    (code,) = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)
    path = tmp / "doc_bot.py"
    path.write_text(code, encoding="utf-8")
    return f"{sys.executable} {path}"


def config(url: str, tmp: Path, name: str, game: str, command: str, protocol: str, **extra: Any) -> BotConfig:
    """A bot's settings with its key file and logs under `tmp`."""
    return BotConfig(
        url=url,
        name=name,
        game=game,
        engine=command,
        protocol=protocol,
        key_file=tmp / f"{name}.key",
        log_dir=tmp / f"logs-{name}",
        **extra,
    )


@contextlib.asynccontextmanager
async def running(cfg: BotConfig, watcher: Peer) -> AsyncIterator[BotRunner]:
    """A bot runner playing in the background, online (as `watcher` sees it) before the body runs; stopped after."""
    assert cfg.key_file is not None
    runner = BotRunner(cfg, bot_key(cfg.key_file))
    task = asyncio.create_task(runner.run())
    try:
        await until_online(watcher, cfg.name, task)
        yield runner
    finally:
        runner.stop()
        await asyncio.wait_for(task, HANG_S)


async def until_online(watcher: Peer, name: str, task: asyncio.Task[None] | None = None) -> None:
    """Wait until `name` is listed online taking challenges (or its runner ended, which raises what it raised)."""
    async with asyncio.timeout(HANG_S):
        while True:
            players = await watcher.request(ListPlayers)
            if any(p.name == name and p.games for p in getattr(players, "players", [])):
                return
            if task is not None and task.done():
                task.result()
                raise AssertionError(f"the runner of {name} stopped before it came online")
            await asyncio.sleep(0.05)


async def games_done(runner: BotRunner, count: int) -> None:
    """Wait until the runner has finished `count` games (left their rooms and ended their engines)."""
    async with asyncio.timeout(HANG_S):
        while runner.games_played < count:
            await asyncio.sleep(0.02)


async def challenge(peer: Peer, to: str, game: str, options: dict[str, Any] | None = None, seat: int = 0) -> Message:
    """Challenge `to` and return how the challenge ended (`challenge_gone`)."""
    sent = await peer.request(ChallengeRequest, to=to, game=game, options=options or {}, seat=seat)
    assert sent.type == "challenge_sent", sent
    return await within(peer.expect("challenge_gone", challenge=sent.challenge))  # type: ignore[attr-defined]


async def within(awaitable: Any) -> Any:
    """Await with the hang guard."""
    return await asyncio.wait_for(awaitable, HANG_S)


async def play_out(peer: Peer, room: str, seat: int | None) -> State:
    """Play `seat` of `room` by the first legal move (None: only watch) until the game ends; the final state."""
    async with asyncio.timeout(HANG_S * 3):
        while True:
            state = await peer.wait(lambda m: m.type == "state" and m.room == room)
            assert isinstance(state, State)
            if state.status == RoomStatus.FINISHED:
                return state
            turn_based = state.next_tick_ms is None  # (a Tron rider that sends nothing keeps its direction)
            if seat is not None and turn_based and seat in state.to_move and state.status == RoomStatus.PLAYING:
                await peer.send(MakeMove(room=room, move=state.legal[0], seq=state.seq))


def log_text(cfg: BotConfig) -> str:
    """Everything the bot's engines wrote to their stderr logs, and the runner log records kept by `caplog`."""
    assert cfg.log_dir is not None
    return "".join(p.read_text(errors="replace") for p in sorted(cfg.log_dir.glob("*.log")))
