"""Fixtures of the cluster tests: a real redis-server and a real PostgreSQL (each skipped with a reason only if its
binaries are missing), and the nodes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cluster.redisproc import REDIS_SERVER, RedisProcess
from tests.server.serverproc import NO_ROOM_CAPS, ServerProcess


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisProcess]:
    """A redis-server on a free port in a temporary folder, killed after the test."""
    if not os.access(REDIS_SERVER, os.X_OK):
        pytest.skip("redis-server is not installed (apt-get install redis-server); CI installs it")
    proc = RedisProcess(tmp_path / "redis").start()
    try:
        yield proc
    finally:
        proc.stop()


LOG = ("--log-level", os.environ["GAMENIGHT_NODE_LOG"]) if os.environ.get("GAMENIGHT_NODE_LOG") else ()
"""GAMENIGHT_NODE_LOG=info (or debug) shows what the nodes log, when a cluster test needs looking into."""


@pytest.fixture
def cluster_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The database the nodes share: a new PostgreSQL database (the cluster's store), or with the parameter
    "sqlite" one SQLite file (nodes on one machine may share one)."""
    if getattr(request, "param", "postgresql") == "sqlite":
        return str(tmp_path / "games.db")
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
def cluster(redis_server: RedisProcess, cluster_db: str) -> Iterator[Callable[[str], ServerProcess]]:
    """Starts node processes (`--cluster` on the test's Redis, one shared database); kills what still runs after."""
    started: list[ServerProcess] = []

    def node(node_id: str, *extra: str) -> ServerProcess:
        proc = ServerProcess(
            cluster_db, "--cluster", redis_server.url, "--node-id", node_id, *NO_ROOM_CAPS, *LOG, *extra
        ).start()
        started.append(proc)
        return proc

    yield node
    for proc in started:
        if proc.proc is not None and proc.proc.poll() is None:
            proc.kill()
