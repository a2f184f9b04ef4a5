"""Fixtures of the web front door's browser tests (tests/web/door.py has their helpers)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.peer import Peer
from tests.web.door import WebServer


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go (kept with pytest's temporary folders)."""
    return tmp_path_factory.mktemp("web-screenshots")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., WebServer]]:
    """Starts web servers (extra flags allowed), each in a folder of its own; any still running is stopped after."""
    started: list[WebServer] = []

    def make(*extra: str, folder: Path | None = None) -> WebServer:
        server = WebServer(folder or tmp_path_factory.mktemp("web"), *extra).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def server(servers: Callable[..., WebServer]) -> WebServer:
    """The web server the playing tests of a module share (the default bounds)."""
    return servers()


@pytest_asyncio.fixture(loop_scope="module")
async def watcher(server: WebServer) -> AsyncIterator[Peer]:
    """An ordinary protocol client on the same server, to see what the browser players did."""
    peer = await Peer.connect(server.game_url, "watcher")
    yield peer
    await peer.close()
