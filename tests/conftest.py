"""Shared fixtures: a real gamenight server on an ephemeral loopback port, and connected test peers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest

from gamenight.server.app import GameServer, ServerConfig
from tests import installed
from tests.peer import Peer
from tests.pg import PgServer, find_bin_dir, unavailable


def pytest_report_header() -> str:
    """Say which gamenight the session tests: the installed package or the checkout."""
    return installed.describe()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Refuse to test an installed package older than the checkout (edited after `pip install .`)."""
    stale = installed.stale_files()
    if stale:
        shown = ", ".join(str(path) for path in stale[:5]) + (" ..." if len(stale) > 5 else "")
        pytest.exit(
            f"the installed gamenight differs from the checkout in {len(stale)} files ({shown}): "
            "install it again with `pip install --no-deps .` before testing",
            returncode=4,
        )


@pytest.fixture
async def game_server() -> AsyncIterator[GameServer]:
    """A running server on 127.0.0.1 with a port chosen by the OS; stopped after the test."""
    server = GameServer(ServerConfig(host="127.0.0.1", port=0, ai_workers=1))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def url(game_server: GameServer) -> str:
    """The websocket URL of the test server."""
    return f"ws://127.0.0.1:{game_server.port}"


@pytest.fixture
async def peers(url: str) -> AsyncIterator[Callable[..., Awaitable[Peer]]]:
    """A factory of connected peers; all are closed after the test."""
    opened: list[Peer] = []

    async def make(name: str = "tester", **hello: object) -> Peer:
        peer = await Peer.connect(url, name, **hello)
        opened.append(peer)
        return peer

    yield make
    for peer in opened:
        await peer.close()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A real PostgreSQL for the session (tests/pg.py), started on first use; skipped only if it cannot be had."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    bin_dir = find_bin_dir()
    assert bin_dir is not None
    server = PgServer(bin_dir).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database for one test (dropped after it)."""
    url = pg_server.new_database()
    yield url
    pg_server.drop_database(url)
