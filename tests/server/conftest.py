"""Fixtures of the server tests: the real server as a child process, or in process on a real SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from gamenight.server.admission import LobbyLimits
from gamenight.server.app import GameServer, ServerConfig
from tests.server.serverproc import ServerProcess


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[Callable[[], ServerProcess]]:
    """Starts server child processes (extra command-line flags allowed) on one database file in a temporary folder;
    kills what still runs after."""
    started: list[ServerProcess] = []

    def make(*extra: str) -> ServerProcess:
        proc = ServerProcess(tmp_path / "games.db", *extra).start()
        started.append(proc)
        return proc

    yield make
    for proc in started:
        if proc.proc is not None and proc.proc.poll() is None:
            proc.kill()


@pytest.fixture
async def db_server(tmp_path: Path) -> AsyncIterator[GameServer]:
    """An in-process server on a real SQLite file (for tests that shorten a server constant or read its state)."""
    server = GameServer(ServerConfig(port=0, ai_workers=1, db=str(tmp_path / "games.db")))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def server_with():
    """A factory of servers with given lobby limits (and server settings); all stopped after the test."""
    started: list[GameServer] = []

    async def make(config: ServerConfig | None = None, **limits: object) -> GameServer:
        config = config or ServerConfig(port=0, ai_workers=1)
        server = GameServer(replace(config, lobby_limits=replace(LobbyLimits(), **limits)))
        await server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        await server.stop()
