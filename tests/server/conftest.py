"""Fixtures of the server tests that run the real server as a child process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

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
