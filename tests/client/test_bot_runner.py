"""`gamenight-bot` end to end: a real server process on loopback, bot runners with the test engines of tests/engines
(and the real gtp-rhino), and a human-like peer that challenges them and plays whole games over real websockets."""

from __future__ import annotations

import logging
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import tests.peer
from gamenight.client.bot.runner import Refused
from gamenight.protocol.messages import AddAi, CreateRoom, Invite, State
from gamenight.protocol.vocab import RoomStatus
from tests.client.botrun import challenge, config, doc_bot, engine, log_text, play_out, running, within
from tests.peer import Peer
from tests.server.serverproc import NO_ROOM_CAPS, ServerProcess

GTP_RHINO = shutil.which("gtp-rhino") or shutil.which("/usr/games/gtp-rhino")
TRON_SMALL = {"map": "random", "width": 10, "height": 10, "tick_ms": 60, "countdown_ms": 0}


@pytest.fixture(autouse=True)
def patient_peers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Peers wait up to a minute for each message (a loaded machine), a hang guard only."""
    monkeypatch.setattr(tests.peer, "TIMEOUT", 60.0)


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """Starts a real server process (extra flags allowed) on a database in tmp_path; killed after the test."""
    started: list[ServerProcess] = []

    def make(*extra: str) -> ServerProcess:
        proc = ServerProcess(tmp_path / "games.db", *NO_ROOM_CAPS, *extra).start()
        started.append(proc)
        return proc

    yield make
    for proc in started:
        if proc.proc is not None and proc.proc.poll() is None:
            proc.kill()


@pytest.fixture
async def server(start_server: Callable[..., ServerProcess]) -> ServerProcess:
    """One real server process with the default limits."""
    return start_server()


@pytest.fixture
async def human(server: ServerProcess) -> AsyncIterator[Peer]:
    """A human player connected to the server (with a key: a claimed name)."""
    peer = await Peer.connect(server.url, "alice", key="alice-key-0123456789")
    yield peer
    await peer.close()


async def challenge_and_play(
    human: Peer, bot: str, game: str, options: dict[str, Any] | None = None, seat: int = 0
) -> State:
    """The human challenges the bot, sits in `seat` and plays the whole game; the final state."""
    gone = await challenge(human, bot, game, options, seat)
    assert gone.why == "accepted", gone
    return await play_out(human, gone.room, seat if game != "tron" else None)


def bot_moves(final: State, bot_seat: int) -> int:
    """How many moves of a turn-based game's final move list the bot's seat made (alternating from seat 0)."""
    return sum(1 for i, _ in enumerate(final.moves) if i % 2 == bot_seat)


@pytest.mark.parametrize("game", ["othello", "connect4", "pentago"])
async def test_jsonl_bot_plays_a_whole_turn_based_game(game: str, server: ServerProcess, human: Peer,
                                                       tmp_path: Path) -> None:
    """A JSON-lines bot (the doc's example) accepts a human's challenge and plays every move to the end."""
    cfg = config(server.url, tmp_path, "jsonbot", game, doc_bot(tmp_path), "jsonl")
    async with running(cfg, human) as runner:
        final = await challenge_and_play(human, "jsonbot", game)
        assert final.result is not None
        assert final.result.reason != "resign"
    assert runner.games_played == 1
    assert len(final.moves) >= 5 and final.moves[1] in final.moves  # the bot's replies are in the game
