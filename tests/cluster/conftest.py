"""Fixtures of the cluster tests: a real redis-server and a real PostgreSQL (each skipped with a reason only if its
binaries are missing), and the nodes."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

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
def cluster_secret(tmp_path: Path) -> Path:
    """The file holding the secret the test's nodes share (mode 0600, as docs/cluster.md says to make it)."""
    path = tmp_path / "cluster-secret"
    path.write_text(secrets.token_hex(32) + "\n")
    path.chmod(0o600)
    return path


def node_access(redis_server: RedisProcess, secret: Path) -> tuple[str, ...]:
    """A node's flags for the test's Redis: its address (user, no password), the password's file, the secret's."""
    password = str(redis_server.password_file())
    return ("--cluster", redis_server.address, "--redis-password-file", password, "--cluster-secret-file", str(secret))


def without_db_password(db: str) -> tuple[str, dict[str, str] | None]:
    """A PostgreSQL URL without its password, and an environment giving it as PGPASSWORD (libpq's way: `ps` shows
    no password), as docs/cluster.md says to run a node; a SQLite file as it is."""
    parts = urlsplit(db)
    if parts.scheme != "postgresql" or parts.password is None:
        return db, None
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}@{host}")), os.environ | {"PGPASSWORD": parts.password}


@pytest.fixture
def cluster(
    redis_server: RedisProcess, cluster_db: str, cluster_secret: Path
) -> Iterator[Callable[[str], ServerProcess]]:
    """Starts node processes (`--cluster` on the test's Redis with its password and the cluster's secret, one shared
    database); kills what still runs after."""
    started: list[ServerProcess] = []

    def node(node_id: str, *extra: str) -> ServerProcess:
        access = node_access(redis_server, cluster_secret)
        db, env = without_db_password(cluster_db)
        proc = ServerProcess(db, *access, "--node-id", node_id, *NO_ROOM_CAPS, *LOG, *extra, env=env).start()
        started.append(proc)
        return proc

    yield node
    for proc in started:
        if proc.proc is not None and proc.proc.poll() is None:
            proc.kill()
